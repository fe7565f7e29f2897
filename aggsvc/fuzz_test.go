package aggsvc

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// FuzzDecode feeds arbitrary bytes through the frame reader and every message
// decoder: each must return a value or an error, never panic, and a decoded
// push must describe exactly its payload.
func FuzzDecode(f *testing.F) {
	push := pushMsg{Step: 3, Partition: 1, DType: Float16, Op: OpMean, Data: make([]byte, 6)}
	f.Add(frameBytes(frameHello, helloMsg{Job: "default/x", Token: []byte("t"), Rank: 0, Workers: 2}.encode()))
	f.Add(frameBytes(framePush, push.header(), push.Data))
	f.Add(frameBytes(frameRegister, registerMsg{AdminToken: []byte("a"), Job: "j", Workers: 1}.encode()))
	f.Add(frameBytes(frameError, errorMsg{Code: 3, Message: "m"}.encode()))
	f.Add([]byte{0, 0, 0, 4, 1, 3, 0, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			fr, err := readFrame(r, 1<<16)
			if err != nil {
				return
			}
			decodeHello(fr.body)
			decodeRegister(fr.body)
			decodeError(fr.body)
			if p, err := decodePush(fr.body); err == nil {
				if len(p.Data) == 0 || len(p.Data)%p.DType.Size() != 0 {
					t.Fatalf("push accepted with %d bytes of %s", len(p.Data), p.DType)
				}
			}
		}
	})
}

// FuzzServerConn writes arbitrary bytes to a live server connection after a
// valid hello: the server answers or closes, and keeps serving a healthy
// job on another connection.
func FuzzServerConn(f *testing.F) {
	push := pushMsg{Step: 1, Partition: 0, DType: Float32, Data: make([]byte, 8)}
	f.Add(frameBytes(framePush, push.header(), push.Data))
	f.Add(frameBytes(frameUnregister))
	f.Add(frameBytes(99))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 3, 0, 0})
	s := startServer(f, func(c *Config) {
		c.MaxFrameBytes, c.StepTimeout, c.Logger = 1<<16, 50*time.Millisecond, hclog.NewNullLogger()
	})
	addr := s.Addr().String()
	f.Fuzz(func(t *testing.T, b []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		h := helloMsg{Job: "fuzz", Token: []byte(JobToken(testKey, "fuzz")), Workers: 1}
		nc.Write(frameBytes(frameHello, h.encode()))
		nc.Write(b)
		nc.(*net.TCPConn).CloseWrite()
		r := bufio.NewReader(nc)
		for {
			if _, err := readFrame(r, 1<<20); err != nil {
				break
			}
		}
		c := dialWorker(t, []string{addr}, "healthy", 0, 1, nil)
		v := []float32{1, 2, 3}
		if err := c.AllReduce(within(t, 5*time.Second), 0, v, OpSum); err != nil || v[2] != 3 {
			t.Fatalf("server stopped serving others: %v %v", v, err)
		}
		c.Close()
	})
}
