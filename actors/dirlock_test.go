package actors

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/segment/vfs"
)

// TestLockDirsFSOnMemFS: the data-directory lock works on a MemFS, so
// tests of a broker on one see a second broker refused; a crash (the
// holder dies) frees it, and the directories it created survive the crash.
func TestLockDirsFSOnMemFS(t *testing.T) {
	mem := vfs.NewMemFS()
	dirs := []string{"/data/a", "/data/b"}
	held, err := lockDirsFS(mem, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDirsFS(mem, []string{"/data/c", "/data/b"}); !errors.Is(err, ErrDirLocked) {
		t.Fatalf("second lock of /data/b: %v, want ErrDirLocked", err)
	}
	// The failed attempt released what it had taken (/data/c).
	c, err := lockDirsFS(mem, []string{"/data/c"})
	if err != nil {
		t.Fatalf("lock of /data/c after a failed attempt: %v", err)
	}
	releaseLocks(c)
	crashed := mem.CrashClone(nil)
	for _, d := range dirs {
		if st, err := crashed.Stat(d); err != nil || !st.IsDir {
			t.Fatalf("%s after a crash: %+v, %v", d, st, err)
		}
	}
	again, err := lockDirsFS(crashed, dirs)
	if err != nil {
		t.Fatalf("lock after a crash: %v", err)
	}
	releaseLocks(again)
	releaseLocks(held)
	if held, err = lockDirsFS(mem, dirs); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	releaseLocks(held)
}
