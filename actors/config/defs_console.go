package config

// KeyConsoleReadOnly turns the web console (web/console) into a viewer:
// no topic creation or deletion, config edits, offset resets or test
// records, whatever the signed-in user's ACLs allow.
const KeyConsoleReadOnly = "samsa.console.read.only"

// consoleDefs are the web console's keys; the console is served on
// samsa.http.listeners.
var consoleDefs = []Def{
	{Name: KeyConsoleReadOnly, Type: Boolean, Default: "false",
		Doc: "The web console at / on samsa.http.listeners only shows: creating and deleting topics, editing configs, resetting offsets and producing test records are refused."},
}
