package zkmeta

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/go-zookeeper/zk"
)

// ProducerIDBlockSize is ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE.
const ProducerIDBlockSize = 1000

// ProducerIDBlock is /latest_producer_id_block: the last block of producer
// ids handed out, [Start, End] inclusive, to Broker.
type ProducerIDBlock struct {
	Broker     int32
	Start, End int64
}

// EncodeProducerIDBlock is ProducerIdBlockZNode.generateProducerIdBlockJson:
// {"version":1,"broker":1,"block_start":"0","block_end":"999"}.
func EncodeProducerIDBlock(b ProducerIDBlock) []byte {
	return object([]field{
		{"version", jInt(1)},
		{"broker", jInt(int64(b.Broker))},
		{"block_start", jStr(strconv.FormatInt(b.Start, 10))},
		{"block_end", jStr(strconv.FormatInt(b.End, 10))},
	})
}

// DecodeProducerIDBlock is ProducerIdBlockZNode.parseProducerIdBlockData.
func DecodeProducerIDBlock(data []byte) (ProducerIDBlock, error) {
	var j struct {
		Broker *int32  `json:"broker"`
		Start  *string `json:"block_start"`
		End    *string `json:"block_end"`
	}
	if err := decodeJSON("producer id block", data, &j); err != nil {
		return ProducerIDBlock{}, err
	}
	if j.Broker == nil || j.Start == nil || j.End == nil {
		return ProducerIDBlock{}, fmt.Errorf("zkmeta: malformed producer id block %q", truncate(data))
	}
	start, err1 := strconv.ParseInt(*j.Start, 10, 64)
	end, err2 := strconv.ParseInt(*j.End, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return ProducerIDBlock{}, fmt.Errorf("zkmeta: producer id block %q: %w", truncate(data), err)
	}
	return ProducerIDBlock{Broker: *j.Broker, Start: start, End: end}, nil
}

// AllocateProducerIDBlock is ZkProducerIdManager.getNewProducerIdBlock:
// a CAS loop on /latest_producer_id_block that claims the size ids after
// the last block (the first block starts at 0). size <= 0 is Kafka's
// 1000.
func (c *Client) AllocateProducerIDBlock(broker int32, size int64) (ProducerIDBlock, error) {
	if size <= 0 {
		size = ProducerIDBlockSize
	}
	for {
		data, st, err := c.get(PathProducerIDBlock)
		version := int32(-1)
		var next ProducerIDBlock
		switch {
		case errors.Is(err, zk.ErrNoNode):
			next = ProducerIDBlock{Broker: broker, Start: 0, End: size - 1}
		case err != nil:
			return ProducerIDBlock{}, err
		case len(data) == 0:
			version = st.Version
			next = ProducerIDBlock{Broker: broker, Start: 0, End: size - 1}
		default:
			version = st.Version
			cur, err := DecodeProducerIDBlock(data)
			if err != nil {
				return ProducerIDBlock{}, err
			}
			if cur.End > math.MaxInt64-size {
				return ProducerIDBlock{}, fmt.Errorf("zkmeta: producer ids exhausted (last block ends at %d)", cur.End)
			}
			next = ProducerIDBlock{Broker: broker, Start: cur.End + 1, End: cur.End + size}
		}
		enc := EncodeProducerIDBlock(next)
		if version < 0 {
			err = c.createRecursive(PathProducerIDBlock, enc, true)
			if errors.Is(err, zk.ErrNodeExists) {
				continue
			}
		} else {
			_, err = c.set(PathProducerIDBlock, enc, version)
			if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
				continue
			}
		}
		if err != nil {
			return ProducerIDBlock{}, err
		}
		return next, nil
	}
}
