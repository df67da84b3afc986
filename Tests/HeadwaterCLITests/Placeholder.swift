// Placeholder until tests exist.
