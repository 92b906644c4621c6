package zkmeta

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Errors callers test with errors.Is. Each wraps the ZooKeeper error it
// stands for (errors.Is(err, zk.ErrNoNode) holds too) except
// ErrControllerMoved, which is Kafka's ControllerMovedException: a fenced
// write whose check of /controller_epoch's zkVersion failed.
var (
	ErrNoNode          = zk.ErrNoNode
	ErrNodeExists      = zk.ErrNodeExists
	ErrBadVersion      = zk.ErrBadVersion
	ErrNotEmpty        = zk.ErrNotEmpty
	ErrSessionExpired  = zk.ErrSessionExpired
	ErrControllerMoved = errors.New("zkmeta: controller moved (the /controller_epoch zkVersion check failed)")
	ErrClosed          = errors.New("zkmeta: client closed")
)

// pathError names the znode an operation failed on, keeping err for
// errors.Is.
func pathError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("zkmeta: %s %s: %w", op, path, err)
}
