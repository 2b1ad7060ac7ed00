"""Front ends: each turns one constraint language into the IR."""
