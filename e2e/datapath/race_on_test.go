//go:build race

package datapath

// raceEnabled: the race detector slows franz-go's codecs in the test
// process about twentyfold (1,000,000 records per codec take 11 minutes
// instead of 32 s), so the big round trips default to fewer records.
const raceEnabled = true
