package nbd

import "time"

// BatchRequest is one read or write of a batch. A read fills Data.
type BatchRequest struct {
	Write bool
	Off   uint64
	Data  []byte
	Err   error // set by the export
}

// BatchExport is an Export that serves several pipelined reads and writes
// at once: an export that fans each request out over the network sends
// a batch's traffic together, one send per peer instead of one per
// request. Requests in a batch may run in any order, as pipelined NBD
// requests may.
type BatchExport interface {
	Export
	DoBatch(reqs []*BatchRequest)
}

// maxBatch bounds the requests gathered into one batch.
const maxBatch = 32

// batchable tells whether r can join a batch.
func batchable(r request) bool { return r.typ == cmdRead || r.typ == cmdWrite }

// serveBatch runs rs through DoBatch and replies to each, in one send.
func (s *session) serveBatch(w *replyWriter, be BatchExport, rs []request) {
	start := time.Now()
	reqs := make([]*BatchRequest, len(rs))
	for i, r := range rs {
		br := &BatchRequest{Write: r.typ == cmdWrite, Off: r.offset, Data: r.data}
		if !br.Write {
			br.Data = make([]byte, r.length)
		}
		reqs[i] = br
	}
	be.DoBatch(reqs)
	w.lock()
	for i, r := range rs {
		s.srv.cfg.Metrics.observe(r.typ, r.length, start, reqs[i].Err)
		if err := reqs[i].Err; err != nil {
			errno, msg := errnoOf(err)
			w.failBody(r, errno, msg)
			continue
		}
		w.okBody(r, reqs[i].Data)
	}
	_ = w.done()
}
