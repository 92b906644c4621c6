// Package lint holds the project's structural checks as tests: the import
// rules of design.md (who may import whom, imports_test.go), the layering
// inside actors/ (layerRules: pure cores stay off protoactor-go, gnet and
// netloop; the partition, fetch and api packages of the actors/ redesign
// keep their order once they exist), the third-party imports that are
// banned from the pure packages, and the clock rules (clock_test.go: no
// clock reads or real timers in the pure cores, no time.Sleep in unit
// tests). It has no code of its own; run it with `go test ./internal/lint/`
// (`make lint-imports`, part of `make test`).
package lint
