// Package console is samsa's built-in web console: cluster and brokers,
// topics, consumer groups, a message browser and a test producer, served
// as server-rendered pages on the broker's HTTP side (samsa.http.listeners,
// mounted at / by internal/wiring).
//
// The console is a Kafka client, not a view into the broker's actors: every
// page is built from Kafka requests (franz-go's kadm and kgo) sent to a
// broker's own Kafka listener. So it shows what any client would see, works
// unchanged against any Kafka cluster, and, when the listener speaks SASL,
// runs as the user who signed in, so ACLs apply to the console as they
// apply to that user's own clients. A request opens its own client and
// closes it when the page is written: there is no shared connection state
// to keep in step with sign-ins, restarts or shutdown.
//
// Pages are html/template (everything escaped) with a little htmx, vendored
// in static/ and embedded with go:embed, so building samsa needs no Node
// tool chain. Mutations (create and delete topics, config edits, offset
// resets, test records) are POST forms protected by a per-browser token
// (double-submit cookie) plus a same-origin check, and refused in read-only
// mode (samsa.console.read.only).
//
// # Threading
//
// net/http calls the handlers concurrently; the session store is the only
// shared state and has its own lock.
package console
