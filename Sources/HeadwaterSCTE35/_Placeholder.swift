// Temporary placeholder (owned by the lead; delete once the module has files).
