// Package lint holds the project's structural checks as tests: the import
// rules of design.md (who may import whom) and the third-party imports that
// are banned from the pure packages. It has no code of its own; run it with
// `go test ./internal/lint/`.
package lint
