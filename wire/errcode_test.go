package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/wire/kerr"
)

func TestErrorCodeOf(t *testing.T) {
	batch := testBatch(CodecNone, 0, sampleRecords()...)
	badCRC := append([]byte{}, batch...)
	badCRC[len(badCRC)-1] ^= 1
	badMagic := append([]byte{}, batch...)
	badMagic[BatchMagicPos] = 1
	_, crcErr := ValidateBatch(badCRC)
	_, magicErr := ValidateBatch(badMagic)
	_, shortErr := ValidateBatch(batch[:20])
	it := NewRecordIter([]byte{0x7e}, 1)
	var rec Record
	it.Next(&rec)
	_, bombErr := Decompress(nil, CodecNone, make([]byte, 10), 5)
	cases := []struct {
		err  error
		want kerr.Code
	}{
		{nil, kerr.None},
		{crcErr, kerr.CorruptMessage},
		{magicErr, kerr.UnsupportedForMessageFormat},
		{shortErr, kerr.CorruptMessage},
		{it.Err(), kerr.InvalidRecord},
		{bombErr, kerr.MessageTooLarge},
		{fmt.Errorf("append: %w", kerr.NotLeaderOrFollower), kerr.NotLeaderOrFollower},
		{errors.New("segment: disk full"), kerr.UnknownServerError},
	}
	for _, c := range cases {
		if got := ErrorCodeOf(c.err); got != c.want {
			t.Errorf("ErrorCodeOf(%v) = %s, want %s", c.err, got.String(), c.want.String())
		}
	}
}
