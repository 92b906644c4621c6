package cluster

import "sync/atomic"

// Table holds the current View for readers on any goroutine; one owner
// (the metadata actor) publishes.
type Table struct{ cur atomic.Pointer[View] }

// NewTable starts with v.
func NewTable(v *View) *Table {
	t := &Table{}
	t.cur.Store(v)
	return t
}

// Load returns the current view.
func (t *Table) Load() *View { return t.cur.Load() }

// Publish replaces the current view.
func (t *Table) Publish(v *View) { t.cur.Store(v) }
