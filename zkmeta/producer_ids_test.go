package zkmeta_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/zkmeta"
)

func TestProducerIDBlocksDoNotOverlap(t *testing.T) {
	addr, root := zkAddr(t), chroot(t)
	first := connect(t, addr, root)
	if err := first.EnsurePersistentPaths(); err != nil { // the node exists, empty, as Kafka leaves it
		t.Fatal(err)
	}
	const brokers, each = 4, 15
	var mu sync.Mutex
	var blocks []zkmeta.ProducerIDBlock
	clients := make([]*zkmeta.Client, brokers)
	for i := range clients {
		clients[i] = connect(t, addr, root)
	}
	together(brokers, func(i int) {
		c, b := clients[i], int32(i)
		for range each {
			blk, err := c.AllocateProducerIDBlock(b, 0)
			if err != nil {
				t.Error(err)
				return
			}
			if blk.Broker != b {
				t.Errorf("block %+v for broker %d", blk, b)
			}
			mu.Lock()
			blocks = append(blocks, blk)
			mu.Unlock()
		}
	})
	if len(blocks) != brokers*each {
		t.Fatalf("%d blocks", len(blocks))
	}
	slices.SortFunc(blocks, func(a, b zkmeta.ProducerIDBlock) int { return int(a.Start - b.Start) })
	for i, b := range blocks {
		if b.Start != int64(i)*1000 || b.End != b.Start+999 {
			t.Fatalf("block %d is %+v: blocks overlap or leave gaps", i, b)
		}
	}
	data, _ := raw(t, first, zkmeta.PathProducerIDBlock)
	last := blocks[len(blocks)-1]
	if string(data) != string(zkmeta.EncodeProducerIDBlock(last)) {
		t.Errorf("znode %s, last block %+v", data, last)
	}
}

func TestProducerIDBlockWithoutTheNode(t *testing.T) {
	c := newClient(t) // no EnsurePersistentPaths: the node is created
	b, err := c.AllocateProducerIDBlock(5, 10)
	if err != nil || b != (zkmeta.ProducerIDBlock{Broker: 5, Start: 0, End: 9}) {
		t.Fatalf("first block %+v, %v", b, err)
	}
	b, err = c.AllocateProducerIDBlock(6, 10)
	if err != nil || b != (zkmeta.ProducerIDBlock{Broker: 6, Start: 10, End: 19}) {
		t.Fatalf("second block %+v, %v", b, err)
	}
}
