//go:build !linux

package netloop

// readDirect reads nothing outside Linux: the frame is filled from gnet's
// buffer as bytes arrive, one read event at a time.
func readDirect(int, []byte) (int, error) { return 0, nil }

// pendingBytes is 0 outside Linux: frames grow with gnet's buffer only.
func pendingBytes(int) int { return 0 }
