package interbroker

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func topicsOf(t *testing.T, resp kmsg.Response) []string {
	t.Helper()
	var names []string
	for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
		names = append(names, *tp.Topic)
	}
	return names
}

// Successive SendReusing calls read their responses into the same
// memory, each decoding its own answer.
func TestSendReusingReusesTheFrame(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	c := newClient(t, Config{})
	var rb ResponseBuffer
	ctx := context.Background()
	resp, err := c.SendReusing(ctx, p.addr, metadataReq("first", "second"), &rb)
	if err != nil {
		t.Fatal(err)
	}
	if got := topicsOf(t, resp); len(got) != 2 || got[1] != "second" {
		t.Fatalf("first response: %v", got)
	}
	if cap(rb.b) == 0 {
		t.Fatal("the buffer kept no memory after a response")
	}
	mem := &rb.b[:1][0]
	resp, err = c.SendReusing(ctx, p.addr, metadataReq("third"), &rb)
	if err != nil {
		t.Fatal(err)
	}
	if got := topicsOf(t, resp); len(got) != 1 || got[0] != "third" {
		t.Fatalf("second response: %v", got)
	}
	if &rb.b[:1][0] != mem {
		t.Fatal("the second response went into new memory")
	}
}

// A call abandoned by its caller may still have its response read into
// the buffer it was lent: the buffer must not lend that memory again.
func TestAbandonedSendReusingLetsTheMemoryGo(t *testing.T) {
	noLeaks(t)
	p, release := holdingPeer(t)
	c := newClient(t, Config{})
	var rb ResponseBuffer
	if _, err := c.SendReusing(context.Background(), p.addr, metadataReq("warm"), &rb); err != nil {
		t.Fatal(err)
	}
	lent := rb.b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.SendReusing(ctx, p.addr, metadataReq("abandoned"), &rb)
		done <- err
	}()
	for r := next(t, p); r.key != 3 || r.corr != 2; r = next(t, p) {
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if rb.b != nil {
		t.Fatal("the buffer still holds memory lent to an abandoned call")
	}
	close(release)
	resp, err := c.SendReusing(context.Background(), p.addr, metadataReq("kept"), &rb)
	if err != nil {
		t.Fatal(err)
	}
	if got := topicsOf(t, resp); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("after the abandoned call: %v", got)
	}
	if cap(lent) > 0 && cap(rb.b) > 0 && &rb.b[:1][0] == &lent[:1][0] {
		t.Fatal("memory lent to the abandoned call was lent again")
	}
}
