package schemaregistry

// The compatibility levels of /config. BACKWARD: the new schema reads
// data written with the previous one; FORWARD: the previous schema reads
// data written with the new one; FULL: both. _TRANSITIVE: against every
// live version, not only the latest. NONE: no check.
const (
	levelBackward           = "BACKWARD"
	levelBackwardTransitive = "BACKWARD_TRANSITIVE"
	levelForward            = "FORWARD"
	levelForwardTransitive  = "FORWARD_TRANSITIVE"
	levelFull               = "FULL"
	levelFullTransitive     = "FULL_TRANSITIVE"
	levelNone               = "NONE"

	// defaultLevel is Confluent's default.
	defaultLevel = levelBackward
)

var levels = []string{levelBackward, levelBackwardTransitive, levelForward, levelForwardTransitive,
	levelFull, levelFullTransitive, levelNone}

// compatibilityProblems checks candidate against the previous versions
// (oldest first, all of them live) under level and lists what breaks.
func compatibilityProblems(level string, candidate parsedSchema, previous []parsedSchema) []string {
	if level == levelNone || len(previous) == 0 {
		return nil
	}
	against := previous[len(previous)-1:]
	switch level {
	case levelBackwardTransitive, levelForwardTransitive, levelFullTransitive:
		against = previous
	}
	backward := level != levelForward && level != levelForwardTransitive
	forward := level != levelBackward && level != levelBackwardTransitive
	var problems []string
	for i := len(against) - 1; i >= 0; i-- {
		old := against[i]
		if backward {
			for _, p := range candidate.readProblems(old) {
				problems = append(problems, "BACKWARD: the new schema cannot read data written with an earlier one: "+p)
			}
		}
		if forward {
			for _, p := range old.readProblems(candidate) {
				problems = append(problems, "FORWARD: an earlier schema cannot read data written with the new one: "+p)
			}
		}
	}
	return problems
}
