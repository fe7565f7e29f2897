package nbd

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRoundTripConcurrent(t *testing.T) {
	exp := &memExport{buf: make([]byte, 1<<20)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"disk": exp}})
	c := dial(t, addr, ClientOptions{Export: "disk"})
	if c.Size() != 1<<20 {
		t.Fatalf("size %d", c.Size())
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := bytes.Repeat([]byte{byte(i + 1)}, 4096)
			off := uint64(i) * 4096
			if err := c.WriteAt(want, off); err != nil {
				t.Error(err)
				return
			}
			got := make([]byte, 4096)
			if err := c.ReadAt(got, off); err != nil || !bytes.Equal(got, want) {
				t.Errorf("block %d: err %v, equal %v", i, err, bytes.Equal(got, want))
			}
		}()
	}
	wg.Wait()
	if err := c.Trim(0, 4096); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	if err := c.ReadAt(got, 0); err != nil || !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatalf("trimmed block not zero: %v", err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestOutOfRangeAndUnknownExport(t *testing.T) {
	exp := &memExport{buf: make([]byte, 8192)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"disk": exp}})
	c := dial(t, addr, ClientOptions{Export: "disk"})
	var ne *Error
	if err := c.ReadAt(make([]byte, 4096), 8000); !errors.As(err, &ne) || ne.Errno != EINVAL {
		t.Fatalf("read past the end: %v", err)
	}
	if err := c.WriteAt(make([]byte, 16), 1<<63); !errors.As(err, &ne) || ne.Errno != ENOSPC {
		t.Fatalf("write past the end: %v", err)
	}
	if err := c.do(9, 0, 0, nil); !errors.As(err, &ne) || ne.Errno != EINVAL {
		t.Fatalf("unknown command: %v", err)
	}
	if err := c.ReadAt(make([]byte, 16), 0); err != nil {
		t.Fatalf("the connection must survive error replies: %v", err)
	}
	_, err := Dial(t.Context(), "tcp", addr, ClientOptions{Export: "nope"})
	if err == nil || !strings.Contains(err.Error(), "no such export") {
		t.Fatalf("unknown export: %v", err)
	}
}

// A client sending garbage loses its connection; others keep working.
func TestBadClientDoesNotHurtOthers(t *testing.T) {
	exp := &memExport{buf: make([]byte, 8192)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"disk": exp}})
	good := dial(t, addr, ClientOptions{Export: "disk"})

	bad := dial(t, addr, ClientOptions{Export: "disk"})
	bad.wmu.Lock()
	bad.bw.Write(bytes.Repeat([]byte{0xff}, requestLen)) // bad magic
	bad.bw.Flush()
	bad.wmu.Unlock()
	select {
	case <-bad.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server kept a connection that sent bad magic")
	}
	// An oversized write closes that connection too.
	big := dial(t, addr, ClientOptions{Export: "disk"})
	big.wmu.Lock()
	big.writeHeader(cmdWrite, 0, 1, 0, MaxPayload+1)
	big.bw.Flush()
	big.wmu.Unlock()
	select {
	case <-big.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server kept a connection that announced an oversized write")
	}
	// Garbage in the handshake.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(raw, make([]byte, 18))
	raw.Write([]byte{0, 0, 0, 1})
	raw.Write(bytes.Repeat([]byte("junk"), 8))
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(raw); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("server should close on bad option magic")
		}
	}
	raw.Close()

	if err := good.WriteAt([]byte("still here"), 0); err != nil {
		t.Fatalf("good client broken by a bad one: %v", err)
	}
}

func TestListAndInfo(t *testing.T) {
	exp := &memExport{buf: make([]byte, 4096)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"a": exp}})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.ReadFull(conn, make([]byte, 18))
	binary.Write(conn, binary.BigEndian, cflagFixedNew|cflagNoZeroes)
	sendOption(conn, optList, nil)
	typ, data, err := readOptReply(conn, optList)
	if err != nil || typ != repServer || string(data[4:]) != "a" {
		t.Fatalf("list: %v %d %q", err, typ, data)
	}
	if typ, _, err := readOptReply(conn, optList); err != nil || typ != repAck {
		t.Fatalf("list end: %v %d", err, typ)
	}
	sendOption(conn, optInfo, []byte{0, 0, 0, 9, 'x', 0, 0}) // name length lies
	if _, _, err := readOptReply(conn, optInfo); err == nil || !strings.Contains(err.Error(), "length") {
		t.Fatalf("malformed INFO: %v", err)
	}
	sendOption(conn, 99, nil)
	if _, _, err := readOptReply(conn, 99); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("unknown option: %v", err)
	}
	sendOption(conn, optAbort, nil)
	if typ, _, err := readOptReply(conn, optAbort); err != nil || typ != repAck {
		t.Fatalf("abort: %v %d", err, typ)
	}
}

func TestTLS(t *testing.T) {
	srvTLS, cliTLS := testTLS(t)
	exp := &memExport{buf: make([]byte, 4096)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"s": exp}, TLS: srvTLS, RequireTLS: true})
	c := dial(t, addr, ClientOptions{Export: "s", TLS: cliTLS})
	if err := c.WriteAt([]byte("secret"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := Dial(t.Context(), "tcp", addr, ClientOptions{Export: "s"})
	if err == nil || !strings.Contains(err.Error(), "TLS is required") {
		t.Fatalf("plain client on a TLS-only server: %v", err)
	}
}

// testTLS makes a self-signed server certificate for 127.0.0.1.
func testTLS(t *testing.T) (*tls.Config, *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memshare-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return srv, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}
