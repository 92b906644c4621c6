// Package vfs is the small filesystem interface the segment package does
// all its file access through, so tests can crash it.
//
// Two implementations:
//
//   - OS, the operating system's filesystem (the only code in segment that
//     calls package os for files). Its files expose their descriptor for
//     sendfile(2) through SysFd, and on Linux they reserve disk space past
//     their end through SpaceReserver (fallocate with KEEP_SIZE).
//   - MemFS, an in-memory filesystem with a crash model and fault
//     injection:
//   - file data written since the file's last Sync is volatile;
//   - directory entries (create, rename, remove, mkdir) are volatile until
//     SyncDir of their parent directory;
//   - CrashClone(rng) returns one possible disk state after a power loss:
//     synced data always survives; unsynced data survives not at all, as a
//     prefix, entirely, or as a garbage tail (a torn write);
//   - SetFault installs a hook consulted before every operation; it can fail
//     an fsync, tear a write (part of it lands, then an error), or fail any
//     other operation; SetCapacity makes writes fail with ENOSPC once the
//     files' total size reaches a limit;
//   - CrashPoints runs a function and hands out the crash images of every
//     point in it (before each operation, and after it returns).
//
// ErrorFS wraps either with a fault hook of its own and, as os.File does,
// can report n == 0 from a write that failed after putting part of its
// bytes down (a full disk); NoSpaceAfter, FailOp and FirstFault build and
// compose its faults.
//
// Files have no cursor: writes are positional (WriteAt), so a writer and
// concurrent readers may share one File. Remove follows POSIX: open handles
// stay readable after the name is gone.
//
// WriteFileAtomic is the one way metadata and checkpoint files are written:
// temporary file, fsync, rename, fsync of the directory.
// MkdirAllSync creates directories that must survive a crash (it fsyncs
// each new directory's parent). Lock takes an exclusive lock on a file:
// flock on OS, an in-process table on MemFS (a crash clone holds none),
// so data-directory locking is testable on MemFS too.
//
// Threading: all three are safe for concurrent use.
package vfs
