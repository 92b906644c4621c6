// Command samsa is the one binary: `samsa serve` runs a broker; the other
// subcommands are clients (admin, bench) that speak the Kafka protocol.
// Flags and config in, wiring out: no broker logic lives here.
package main
