//go:build race

package partition

// raceEnabled: the race detector slows the seeded simulations about
// fivefold, so `make test` (which runs under it) runs fewer seeds.
const raceEnabled = true
