// Package samsa runs a samsa broker inside a program of one's own, with
// plug-ins (package actors/plugin): user behaviour supervised inside the
// broker. The body of a main is three lines:
//
//	func main() {
//		if err := samsa.Run(samsa.Options{}, myplugin.New()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// Run configures the broker as `samsa serve` does, from Kafka's
// server.properties keys: a file (Options.ConfigFile or $SAMSA_CONFIG),
// SAMSA_* environment variables, then Options.Properties, later ones
// winning. It runs until SIGTERM or SIGINT, then stops the plug-ins
// (each commits what it handled) and the broker (every log closed
// cleanly). Start and Stop do the same under a program's or a test's own
// control.
//
// It is a top-level folder of its own (pkg/) because it is the module's
// one importable entry point for other modules: everything else a user
// needs is the plug-in API in actors/plugin.
package samsa
