"""Authentication: who may open a session, and the SASL PLAIN transport that carries the password."""
