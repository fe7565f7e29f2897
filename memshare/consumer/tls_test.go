package consumer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/donor"
)

// With TLS configured, the lease API is HTTPS and slabs are served only
// after NBD_OPT_STARTTLS; the volume works the same.
func TestTLSDonors(t *testing.T) {
	srv, cli := testTLS(t)
	var infos []memshare.DonorInfo
	for i := range 3 {
		d, err := donor.New(donor.Config{Node: string(rune('a' + i)), Key: testKey, SlabSize: testSlab, CapacityBytes: 8 << 20, TLS: srv, RequireTLS: true})
		if err != nil {
			t.Fatal(err)
		}
		nl, _ := net.Listen("tcp", "127.0.0.1:0")
		al, _ := net.Listen("tcp", "127.0.0.1:0")
		d.Start(nl, al)
		t.Cleanup(func() { d.Close() })
		infos = append(infos, d.Info())
	}
	view, _ := memshare.NewStaticDonors(infos)
	v := openVolume(t, &cluster{view: view}, Config{Size: 2 << 20, DataShards: 2, ParityShards: 1, TLS: cli})
	m := &model{buf: make([]byte, v.Size())}
	p := randBytes(mrand.New(mrand.NewPCG(1, 1)), int(v.Size()))
	if err := v.WriteAt(p, 0, false); err != nil {
		t.Fatal(err)
	}
	m.write(p, 0)
	m.verify(t, v)
	// Without TLS the donors refuse.
	cfg := Config{ID: "plain", Size: 1 << 20, DataShards: 2, ParityShards: 1, Key: testKey, SlabSize: testSlab, Donors: view}
	if _, err := Open(t.Context(), cfg); err == nil {
		t.Fatal("a plain-text consumer leased from TLS-only donors")
	}
}

func testTLS(t *testing.T) (*tls.Config, *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memshare-donor"},
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
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}
