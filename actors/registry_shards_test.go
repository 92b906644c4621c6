package actors

import (
	"runtime"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// An actor system's process registry must not cost megabytes of heap
// (registry_shards.go): with protoactor's default of 32 shards in each of
// its 1024 maps it held about 3 MiB.
func TestActorSystemRegistryIsSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	system := actor.NewActorSystem()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(system)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Fatalf("a new actor system holds %d KiB of heap, want under 1 MiB", grown>>10)
	}
}
