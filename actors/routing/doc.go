// Package routing is the broker's routing table: which partition actor
// owns each partition, and the view each one publishes for the fetch
// path. The metadata actor builds a new immutable Routes after every
// change and publishes it through a Table; everyone else reads the
// current one without locks.
//
// Threading: a Routes is immutable once published; Table is safe for
// concurrent use (one atomic pointer). Only the metadata actor publishes.
package routing
