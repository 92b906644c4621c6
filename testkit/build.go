package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// SamsaPackage is the import path of the samsa command that SamsaBinary
// builds.
const SamsaPackage = "github.com/samsa-io/samsa/cmd/samsa"

// BinaryEnv names the environment variable that, when set, points at a
// prebuilt samsa binary; SamsaBinary then uses it instead of building.
const BinaryEnv = "SAMSA_BINARY"

// BuildFlagsEnv names the environment variable whose words are added to
// the go build command line, for example "-race" to run the broker under
// the race detector (a race then makes it exit non-zero, which Stop
// reports).
const BuildFlagsEnv = "SAMSA_TESTKIT_BUILD_FLAGS"

var build struct {
	once sync.Once
	path string
	err  error
}

// SamsaBinary returns the path of a samsa executable, building it with
// `go build` the first time it is called in this process (later calls, and
// concurrent ones, wait for and share that one build). The build runs in
// the current directory, so it works from any package inside the samsa
// module or inside a module that requires it. The binary lives in
// $TMPDIR/samsa-testkit-UID/ under a name carrying this process's id;
// binaries left there by processes that have exited are removed on the
// next build.
func SamsaBinary() (string, error) {
	build.once.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			if _, err := os.Stat(p); err != nil {
				build.err = fmt.Errorf("testkit: %s=%s: %w", BinaryEnv, p, err)
				return
			}
			build.path = p
			return
		}
		build.path, build.err = buildSamsa()
	})
	return build.path, build.err
}

func buildSamsa() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("samsa-testkit-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	removeStaleBinaries(dir)
	out := filepath.Join(dir, fmt.Sprintf("samsa-%d", os.Getpid()))
	args := append([]string{"build", "-o", out}, strings.Fields(os.Getenv(BuildFlagsEnv))...)
	cmd := exec.Command("go", append(args, SamsaPackage)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testkit: go build %s: %w\n%s", SamsaPackage, err, msg)
	}
	return out, nil
}

// removeStaleBinaries deletes samsa-PID files whose process is gone.
func removeStaleBinaries(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, ok := strings.CutPrefix(e.Name(), "samsa-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
