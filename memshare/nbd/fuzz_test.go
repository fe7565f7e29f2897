package nbd

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// clientHello is what a well-behaved client sends before options.
func clientHello() []byte {
	return binary.BigEndian.AppendUint32(nil, cflagFixedNew|cflagNoZeroes)
}

// optBytes encodes one option request.
func optBytes(opt uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, optMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func goData(name string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	b = append(b, name...)
	return binary.BigEndian.AppendUint16(b, 0)
}

func reqBytes(typ uint16, off uint64, n uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, requestMagic)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint64(b, 7)
	b = binary.BigEndian.AppendUint64(b, off)
	b = binary.BigEndian.AppendUint32(b, n)
	return append(b, payload...)
}

// feed runs a server connection on input and waits until it ends; the
// server must neither panic nor hang.
func feed(t *testing.T, input []byte) {
	exp := &memExport{buf: make([]byte, 64<<10)}
	srv, err := NewServer(ServerConfig{Exports: mapExports{"disk": exp}, HandshakeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cli, sc := net.Pipe()
	done := make(chan struct{})
	go func() {
		srv.ServeConn(sc)
		close(done)
	}()
	go io.Copy(io.Discard, cli)
	cli.SetWriteDeadline(time.Now().Add(2 * time.Second))
	cli.Write(input)
	cli.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("server still serving %d bytes of input after the client closed", len(input))
	}
}

func FuzzHandshake(f *testing.F) {
	hello := clientHello()
	f.Add(hello)
	f.Add(append(clientHello(), optBytes(optGo, goData("disk"))...))
	f.Add(append(clientHello(), optBytes(optInfo, goData("nope"))...))
	f.Add(append(clientHello(), optBytes(optList, nil)...))
	f.Add(append(clientHello(), optBytes(optStructuredReply, nil)...))
	f.Add(append(clientHello(), optBytes(optExportName, []byte("disk"))...))
	f.Add(append(clientHello(), optBytes(optStartTLS, nil)...))
	f.Add(append(clientHello(), optBytes(optAbort, nil)...))
	f.Add(append(clientHello(), optBytes(optInfo, []byte{0, 0, 0, 9, 'x', 0, 0})...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) { feed(t, data) })
}

func FuzzRequests(f *testing.F) {
	f.Add(reqBytes(cmdRead, 0, 4096, nil))
	f.Add(reqBytes(cmdWrite, 8, 4, []byte("abcd")))
	f.Add(reqBytes(cmdWrite, 1<<40, 4, []byte("abcd")))
	f.Add(reqBytes(cmdRead, 65530, 100, nil))
	f.Add(reqBytes(cmdTrim, 0, 1<<31, nil))
	f.Add(reqBytes(cmdFlush, 0, 0, nil))
	f.Add(reqBytes(77, 0, 0, nil))
	f.Add(reqBytes(cmdDisc, 0, 0, nil))
	f.Add(reqBytes(cmdWrite, 0, MaxPayload+1, nil))
	f.Add([]byte("not a request at all, but 28+"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, structured := range []bool{false, true} {
			in := clientHello()
			if structured {
				in = append(in, optBytes(optStructuredReply, nil)...)
			}
			in = append(in, optBytes(optGo, goData("disk"))...)
			feed(t, append(in, data...))
		}
	})
}

// FuzzParseRequest checks the header parser and validator directly: any
// request they accept lies inside the export.
func FuzzParseRequest(f *testing.F) {
	f.Add(reqBytes(cmdRead, 0, 512, nil)[:requestLen])
	f.Add(reqBytes(cmdWrite, 1<<63, 1<<31, nil)[:requestLen])
	f.Add(make([]byte, requestLen))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < requestLen {
			return
		}
		r, err := parseRequest(data[:requestLen])
		if err != nil {
			return
		}
		const size = 1 << 20
		if errno, _ := check(r, size); errno == 0 && r.typ != cmdFlush {
			if r.offset+uint64(r.length) > size || r.offset+uint64(r.length) < r.offset {
				t.Fatalf("accepted out-of-range request %+v", r)
			}
		}
	})
}
