package pipeline

// CommandProgram exposes commandProgram to the external tests.
var CommandProgram = commandProgram
