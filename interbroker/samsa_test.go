package interbroker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/interbroker"
	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// TestAgainstSamsa talks to a real samsa broker: the framing, the
// handshake and the version choice meet a peer written by someone else's
// rules (wire's decoder), not the test's own fake. An external test
// package, because testkit builds a broker and the broker will import
// this package.
func TestAgainstSamsa(t *testing.T) {
	b := testkit.StartInProcess(t)
	c := interbroker.New(interbroker.Config{ClientID: "samsa-broker-1"})
	defer c.Close()
	ctx := context.Background()

	avReq := kmsg.NewPtrApiVersionsRequest()
	avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "samsa", "test"
	resp, err := c.Send(ctx, b.Addr, avReq)
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	row, _ := wire.LookupAPI(wire.KeyApiVersions)
	if av.ErrorCode != 0 || av.Version != min(row.Max, av.MaxVersion()) || len(av.ApiKeys) != len(wire.APIs) {
		t.Fatalf("ApiVersions v%d: error %d, %d keys", av.Version, av.ErrorCode, len(av.ApiKeys))
	}

	// Metadata: kmsg knows newer versions than samsa serves, so this is
	// samsa's max; it is flexible (request header v2, response header v1).
	req := kmsg.NewPtrMetadataRequest()
	resp, err = c.Send(ctx, b.Addr, req)
	if err != nil {
		t.Fatal(err)
	}
	md := resp.(*kmsg.MetadataResponse)
	mrow, _ := wire.LookupAPI(3)
	if md.Version != mrow.Max || len(md.Brokers) != 1 {
		t.Fatalf("Metadata v%d (samsa serves up to v%d), %d brokers", md.Version, mrow.Max, len(md.Brokers))
	}

	// A non-flexible version pinned: request header v1, response header v0.
	resp, err = c.Send(ctx, b.Addr, interbroker.Pin(kmsg.NewPtrMetadataRequest(), 1))
	if err != nil {
		t.Fatal(err)
	}
	if md := resp.(*kmsg.MetadataResponse); md.Version != 1 || len(md.Brokers) != 1 {
		t.Fatalf("pinned Metadata v1: answered v%d, %d brokers", md.Version, len(md.Brokers))
	}

	// An API samsa does not advertise is refused before it is sent.
	if _, err := c.Send(ctx, b.Addr, kmsg.NewPtrUpdateMetadataRequest()); !errors.Is(err, interbroker.ErrUnsupported) {
		t.Fatalf("UpdateMetadata: %v, want ErrUnsupported", err)
	}
}
