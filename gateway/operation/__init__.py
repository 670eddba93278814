"""Operations: one per statement or metadata RPC, each a small state machine with its own result cursor."""
