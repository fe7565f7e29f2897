package driver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/donor"
	"github.com/hashicorp/nomad/plugins/drivers"
)

const testMemshareKey = "driver-test-memshare-key"

// startTestDonors runs n donors on loopback with 1 MiB slabs (TLS-only
// when srvTLS is given).
func startTestDonors(t *testing.T, n int, srvTLS ...*tls.Config) []MemshareDonor {
	t.Helper()
	var out []MemshareDonor
	var tc *tls.Config
	if len(srvTLS) > 0 {
		tc = srvTLS[0]
	}
	for i := range n {
		d, err := donor.New(donor.Config{Node: "donor" + string(rune('a'+i)), Key: []byte(testMemshareKey), SlabSize: 1 << 20, CapacityBytes: 16 << 20,
			TLS: tc, RequireTLS: tc != nil})
		if err != nil {
			t.Fatal(err)
		}
		nl, _ := net.Listen("tcp", "127.0.0.1:0")
		al, _ := net.Listen("tcp", "127.0.0.1:0")
		d.Start(nl, al)
		t.Cleanup(func() { d.Close() })
		info := d.Info()
		out = append(out, MemshareDonor{Node: info.Node, NBDAddr: info.NBDAddr, APIAddr: info.APIAddr})
	}
	return out
}

func memshareConfig(t *testing.T, donors []MemshareDonor) Config {
	conf := simConfig(t.TempDir(), 1)
	conf.Memshare = &MemshareConfig{Key: testMemshareKey, SlabSize: "1MiB", DataShards: 2, ParityShards: 1, Donors: donors}
	return conf
}

func TestRemoteMemory_RefusedWithoutMemshare(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	_, _, err := td.StartTask(td.newRejectedTask(t, "rm", TaskConfig{RemoteMemory: "8MiB"}))
	if err == nil || !strings.Contains(err.Error(), "remote_memory") || !strings.Contains(err.Error(), "memshare block") {
		t.Fatalf("got %v", err)
	}
}

func TestRemoteMemory_SwapNeedsKernelModule(t *testing.T) {
	td := newTestDriver(t, memshareConfig(t, startTestDonors(t, 3)))
	_, _, err := td.StartTask(td.newRejectedTask(t, "rm", TaskConfig{RemoteMemory: "4MiB", RemoteMemoryMode: "swap"}))
	if err == nil || !strings.Contains(err.Error(), `remote_memory_mode: "swap"`) {
		t.Fatalf("got %v", err)
	}
}

func TestRemoteMemory_TooFewDonors(t *testing.T) {
	td := newTestDriver(t, memshareConfig(t, startTestDonors(t, 2)))
	_, _, err := td.StartTask(td.newRejectedTask(t, "rm", TaskConfig{RemoteMemory: "4MiB"}))
	if err == nil || !strings.Contains(err.Error(), "distinct nodes") {
		t.Fatalf("got %v", err)
	}
}

// The task gets an NBD URI that a real client inside the task opens, and
// its leases go back to the donors when it exits.
func TestRemoteMemory_TaskAttaches(t *testing.T) {
	donors := startTestDonors(t, 3)
	td := newTestDriver(t, memshareConfig(t, donors))
	attachAndCheck(t, td, donors, nil)
}

// The same with TLS-only donors and the plugin's tls_cert/tls_key/tls_ca.
func TestRemoteMemory_TLS(t *testing.T) {
	dir := t.TempDir()
	srv := writeTestCert(t, dir)
	donors := startTestDonors(t, 3, srv)
	conf := memshareConfig(t, donors)
	conf.Memshare.TLSCert, conf.Memshare.TLSKey, conf.Memshare.TLSCA = dir+"/cert.pem", dir+"/key.pem", dir+"/cert.pem"
	conf.Memshare.Layout = "whole"
	td := newTestDriver(t, conf)
	rootPool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(dir + "/cert.pem")
	rootPool.AppendCertsFromPEM(caPEM)
	attachAndCheck(t, td, donors, &tls.Config{RootCAs: rootPool})
}

func attachAndCheck(t *testing.T, td *testDriver, donors []MemshareDonor, cliTLS *tls.Config) {
	script := `echo NBDSIZE=$(nbdinfo --size "$CARAVAN_REMOTE_MEMORY_URI" 2>&1); env; echo END_OF_ENV`
	task := td.newTask(t, "rm", script, TaskConfig{RemoteMemory: "4MiB"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	env := stdoutEnv(t, task)
	uri := env["CARAVAN_REMOTE_MEMORY_URI"]
	if !strings.HasPrefix(uri, "nbd://127.0.0.1:") || env["CARAVAN_REMOTE_MEMORY_SIZE"] != "4194304" {
		t.Fatalf("task env: uri %q size %q", uri, env["CARAVAN_REMOTE_MEMORY_SIZE"])
	}
	if env["NBDSIZE"] != "4194304" {
		t.Fatalf("nbdinfo inside the task: %q", env["NBDSIZE"])
	}
	if res := td.waitExit(t, task.ID); res.ExitCode != 0 {
		t.Fatalf("task exit %+v", res)
	}
	api := memshare.NewAPIClient(donors[0].APIAddr, []byte(testMemshareKey), cliTLS)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := api.Status(context.Background())
		if err == nil && st.Used == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leases not returned after the task exited: %+v %v", st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDonorBudget(t *testing.T) {
	b := newDonorBudget()
	b.setHeadroom(256 << 20)
	task := &donorTask{reserved: 1 << 30}
	b.add("t", task)
	if c := b.capacity(); c != 0 {
		t.Fatalf("nothing is lent before the first usage sample, got %d", c)
	}
	task.usage.Store(300 << 20)
	task.seen.Store(true)
	if c := b.capacity(); c != (1024-300-256)<<20 {
		t.Fatalf("capacity %d MiB", c>>20)
	}
	task.limit = 100 << 20
	if c := b.capacity(); c != 100<<20 {
		t.Fatalf("donate_memory caps the loan, got %d MiB", c>>20)
	}
	task.usage.Store(900 << 20) // the donor grew back
	if c := b.capacity(); c != 0 {
		t.Fatalf("a grown donor lends nothing, got %d MiB", c>>20)
	}
	b.remove("t")
}

func TestMemshareConfigErrorsNameFields(t *testing.T) {
	cases := map[string]MemshareConfig{
		"memshare.key":              {Key: "short"},
		"memshare.nbd_addr":         {Key: testMemshareKey, NBDAddr: "127.0.0.1:0"},
		"memshare.data_shards":      {Key: testMemshareKey, DataShards: 3},
		"memshare.parity_shards":    {Key: testMemshareKey, ParityShards: 12},
		"memshare.slab_size":        {Key: testMemshareKey, SlabSize: "lots"},
		"memshare.donor[0]":         {Key: testMemshareKey, Donors: []MemshareDonor{{Node: "a"}}},
		"memshare.tls_cert":         {Key: testMemshareKey, TLSCert: "/nonexistent.pem"},
		"memshare.tls_cert/tls_key": {Key: testMemshareKey, TLSCert: "/x.pem", TLSKey: "/x.key", TLSCA: "/x.ca"},
	}
	for field, c := range cases {
		if _, err := c.settings(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestReservedBytesPrefersMemoryMax(t *testing.T) {
	cfg := &drivers.TaskConfig{Resources: testResources("a", "t")}
	cfg.Resources.NomadResources.Memory.MemoryMaxMB = 512
	if got := reservedBytes(cfg); got != 512<<20 {
		t.Fatalf("got %d", got)
	}
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 (its own CA)
// to dir/cert.pem and dir/key.pem and returns a server config with it.
func writeTestCert(t *testing.T, dir string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memshare-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(dir+"/cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(dir+"/key.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestProcTreeRSSCountsChildren(t *testing.T) {
	self := procTreeRSS(os.Getpid())
	if self < 1<<20 {
		t.Fatalf("this test process has %d bytes resident?", self)
	}
	if procTreeRSS(1<<30) != 0 {
		t.Fatal("a missing process has no memory")
	}
}
