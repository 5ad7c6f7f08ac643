"""ISA knowledge as data: one opcode table module per ISA (see STYLE: tables, not if-chains), in the
vocabulary of kinspect.ops, looked up by its one classifier."""
