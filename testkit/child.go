package testkit

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// child is one run of a broker's child process, the part BrokerProcess
// and ClusterBroker share: the command, a channel closed once it has
// been waited for (its exit status is then in cmd.ProcessState), and
// whether we ended it. Its owner serialises calls with its own mutex; a
// nil *child is a process never started.
type child struct {
	cmd       *exec.Cmd
	exited    chan struct{}
	endedByUs bool // Stop or Kill ended it, so its death is no failure
}

// startChild starts cmd with SIGKILL as its parent-death signal (the
// child dies with a crashed or timed-out test binary) and waits for it in
// the background.
func startChild(cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &child{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *child) running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

func (p *child) pid() int {
	if !p.running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// state describes how the process ended, "" while it runs.
func (p *child) state() string {
	if p == nil || p.running() {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// kill sends SIGKILL and waits until the process is gone.
func (p *child) kill() {
	if !p.running() {
		return
	}
	p.endedByUs = true
	_ = p.cmd.Process.Kill()
	<-p.exited
}

var (
	errDiedOnItsOwn = errors.New("had already exited")
	errStopTimeout  = errors.New("did not exit in time after SIGTERM; killed")
)

// terminate sends SIGTERM and waits up to timeout for the exit (then
// kills it: errStopTimeout), returning the exit status. A process we had
// ended already, or one that exited 0, gives (nil, nil); one that died
// on its own gives errDiedOnItsOwn with its status.
func (p *child) terminate(timeout time.Duration) (*os.ProcessState, error) {
	if p == nil {
		return nil, nil
	}
	if !p.running() {
		if p.endedByUs || p.cmd.ProcessState.Success() {
			return nil, nil
		}
		return p.cmd.ProcessState, errDiedOnItsOwn
	}
	p.endedByUs = true
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return nil, err
	}
	select {
	case <-p.exited:
		return p.cmd.ProcessState, nil
	case <-time.After(timeout):
		p.kill()
		return p.cmd.ProcessState, errStopTimeout
	}
}
