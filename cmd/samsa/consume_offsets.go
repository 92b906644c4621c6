package main

import (
	"fmt"
	"strconv"
	"strings"
)

// startKind is where `samsa consume` starts reading a partition (-o).
type startKind int

const (
	startBeginning startKind = iota // the log start offset
	startEnd                        // the end: only records that arrive from now
	startStored                     // the group's committed offset (-G), else the beginning
	startOffset                     // an absolute offset (-o N)
	startFromEnd                    // N records before the end (-o -N)
	startTime                       // the first record at or after a timestamp (-o s@ms)
)

// offsetPlan is what -o says: where to start and, with e@ms, where to
// stop.
type offsetPlan struct {
	start   startKind
	n       int64 // the offset, count or timestamp of start
	stopAt  int64 // e@ms: stop before the first record at or after this time; -1: none
	startOK bool  // a start was given
}

// parseOffsets reads kcat's -o values (repeatable): beginning, end,
// stored, N, -N, s@<ms>, e@<ms>; at most one start and one stop.
func parseOffsets(specs []string) (offsetPlan, error) {
	p := offsetPlan{start: startBeginning, stopAt: -1}
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if rest, ok := strings.CutPrefix(s, "e@"); ok {
			ts, err := strconv.ParseInt(rest, 10, 64)
			if err != nil || ts < 0 || p.stopAt >= 0 {
				return p, fmt.Errorf("-o %q: want e@<unix milliseconds>, once", s)
			}
			p.stopAt = ts
			continue
		}
		if p.startOK {
			return p, fmt.Errorf("-o %q: a start offset is already given", s)
		}
		p.startOK = true
		switch {
		case s == "beginning":
			p.start = startBeginning
		case s == "end":
			p.start = startEnd
		case s == "stored":
			p.start = startStored
		case strings.HasPrefix(s, "s@"):
			ts, err := strconv.ParseInt(s[2:], 10, 64)
			if err != nil || ts < 0 {
				return p, fmt.Errorf("-o %q: want s@<unix milliseconds>", s)
			}
			p.start, p.n = startTime, ts
		default:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return p, fmt.Errorf("-o %q: want beginning, end, stored, N, -N, s@<ms> or e@<ms>", s)
			}
			if n < 0 {
				p.start, p.n = startFromEnd, -n
			} else {
				p.start, p.n = startOffset, n
			}
		}
	}
	return p, nil
}

// partitionBounds are one partition's offsets as listed when consume
// starts.
type partitionBounds struct {
	logStart int64
	end      int64 // the high watermark, or the last stable offset for read_committed
	atTime   int64 // the first offset at or after the start timestamp (end when none)
	stopAt   int64 // the first offset at or after the stop timestamp (end when none)
}

// startOffset is where the plan starts reading a partition with bounds b.
// In a group, the committed offset (-1 when none) wins, as in kcat and
// every Kafka consumer: -o is then the reset for partitions without one.
func (p offsetPlan) startOffset(b partitionBounds, committed int64) int64 {
	if committed >= 0 {
		return committed
	}
	var at int64
	switch p.start {
	case startBeginning, startStored:
		at = b.logStart
	case startEnd:
		at = b.end
	case startOffset:
		at = p.n
	case startFromEnd:
		at = b.end - p.n
	case startTime:
		at = b.atTime
	}
	return min(max(at, b.logStart), b.end)
}

// stopOffset is the offset a partition is read up to (excluded) with
// -e or e@ms; -1 when reading never stops.
func (p offsetPlan) stopOffset(b partitionBounds, exitAtEnd bool) int64 {
	switch {
	case p.stopAt >= 0:
		return b.stopAt
	case exitAtEnd:
		return b.end
	}
	return -1
}
