package live

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strconv"

	"github.com/hashicorp/nomad/api"
)

// event is one event of Nomad's stream, its payload kept as the JSON the
// server sent. The api package decodes each payload into nested maps,
// which the mirror then encoded again to read as typed structs: at 300
// nodes that was a third of the scheduler's CPU (scheduler/live/README.md,
// "two cores"), most of it full jobs three times per job. Kept raw, a
// payload is decoded once, straight into the type that reads it.
type event struct {
	Topic   api.Topic
	Type    string
	Key     string
	Index   uint64
	Payload map[string]json.RawMessage
}

// eventFrame is one frame of the stream: the events of one Raft index, or
// the error that ended the stream. A frame with neither index nor events
// is a heartbeat.
type eventFrame struct {
	Index  uint64
	Events []event
	err    error
}

// streamEvents follows /v1/event/stream from index. The channel carries
// each frame but heartbeats; it closes after a frame with err (the
// connection broke or a frame did not decode) or when ctx ends.
func (s *Scheduler) streamEvents(ctx context.Context, index uint64) (<-chan eventFrame, error) {
	q := url.Values{"index": {strconv.FormatUint(index, 10)}}
	for topic, keys := range streamTopics {
		for _, k := range keys {
			q.Add("topic", string(topic)+":"+k)
		}
	}
	opts := (&api.QueryOptions{Namespace: s.cfg.Namespace}).WithContext(ctx)
	body, err := s.api.Raw().Response("/v1/event/stream?"+q.Encode(), opts)
	if err != nil {
		return nil, err
	}
	ch := make(chan eventFrame, 10)
	go func() {
		defer close(ch)
		defer func() { _ = body.Close() }()
		readFrames(ctx, body, ch)
	}()
	return ch, nil
}

// readFrames decodes newline-delimited frames from r onto ch until one
// fails to decode (sent with its error) or ctx ends.
func readFrames(ctx context.Context, r io.Reader, ch chan<- eventFrame) {
	dec := json.NewDecoder(r)
	for ctx.Err() == nil {
		var f eventFrame
		if err := dec.Decode(&f); err != nil {
			f = eventFrame{err: err}
		} else if f.Index == 0 && len(f.Events) == 0 {
			continue // heartbeat
		}
		select {
		case <-ctx.Done():
			return
		case ch <- f:
		}
		if f.err != nil {
			return
		}
	}
}
