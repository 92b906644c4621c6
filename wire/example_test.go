package wire_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// A frame as netloop hands it over (without the size prefix): decode it,
// answer ApiVersions from the table, encode the response.
func ExampleDecodeRequest() {
	client := kmsg.NewRequestFormatter(kmsg.FormatterClientID("example"))
	body := &kmsg.ApiVersionsRequest{Version: 3, ClientSoftwareName: "example", ClientSoftwareVersion: "1.0"}
	frame := client.AppendRequest(nil, body, 7)[4:]

	req, err := wire.DecodeRequest(frame)
	if err != nil {
		var de *wire.DecodeError
		if errors.As(err, &de) {
			fmt.Println("close connection of client", de.Header.ClientID, err)
		}
		return
	}
	resp := wire.EncodeResponse(req, wire.HandleApiVersions(req))
	fmt.Println(wire.APIName(req.Header.APIKey), req.Header.APIVersion, req.Header.ClientID, resp.Len() > 8)
	// Output: ApiVersions 3 example true
}

type segmentFile struct{ *bytes.Reader }

func (segmentFile) SysFd() (int, bool) { return 0, false }

// A Fetch response whose record data stays in a file: the chunks are the
// encoder's bytes around the file region, which netloop sends with
// sendfile on plaintext listeners.
func ExampleEncodeFetchResponse() {
	seg := segmentFile{bytes.NewReader(make([]byte, 1<<20))}
	resp, err := wire.EncodeFetchResponse(7, &wire.FetchResponse{
		Version: 12,
		Topics: []wire.FetchTopic{{Name: "orders", Partitions: []wire.FetchPartition{{
			Partition: 0, HighWatermark: 42, LastStableOffset: 42, LogStartOffset: 0, PreferredReadReplica: -1,
			Records: []wire.Chunk{{File: seg, Position: 4096, Length: 8192}},
		}}}},
	})
	if err != nil {
		panic(err)
	}
	for _, c := range resp.Chunks {
		if c.File != nil {
			fmt.Printf("file region %d+%d\n", c.Position, c.Length)
		} else {
			fmt.Printf("%d bytes\n", len(c.Bytes))
		}
	}
	fmt.Println("total", resp.Len())
	// Output:
	// 65 bytes
	// file region 4096+8192
	// 3 bytes
	// total 8260
}
