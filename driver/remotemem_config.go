package driver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/caravan-dl/caravan/driver/taskspec"
	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
)

// MemshareConfig is the plugin config's memshare block: this node's donor
// server and the donor view its consumers pick from.
//
//	memshare {
//	  key_file = "/etc/caravan/memshare.key"
//	  nbd_addr = "0.0.0.0:10809"   # serve donated slabs ("" = lend nothing)
//	  api_addr = "0.0.0.0:10810"
//	  donor { node = "a" nbd_addr = "10.0.0.1:10809" api_addr = "10.0.0.1:10810" }
//	  tls_cert = "..."  tls_key = "..."  tls_ca = "..."   # optional
//	}
type MemshareConfig struct {
	Key          string          `codec:"key"`
	KeyFile      string          `codec:"key_file"`
	Node         string          `codec:"node"`
	NBDAddr      string          `codec:"nbd_addr"`
	APIAddr      string          `codec:"api_addr"`
	SlabSize     string          `codec:"slab_size"`
	Headroom     string          `codec:"headroom"`
	DataShards   int64           `codec:"data_shards"`
	ParityShards int64           `codec:"parity_shards"`
	Layout       string          `codec:"layout"`
	Donors       []MemshareDonor `codec:"donor"`
	// TLS: this node's certificate and key (for its donor server) and the
	// CA that signed every donor's certificate (for its consumers). With
	// all three set, donors require TLS and consumers use it.
	TLSCert string `codec:"tls_cert"`
	TLSKey  string `codec:"tls_key"`
	TLSCA   string `codec:"tls_ca"`
}

// MemshareDonor is one entry of the static donor view (until gossip).
type MemshareDonor struct {
	Node    string `codec:"node"`
	NBDAddr string `codec:"nbd_addr"`
	APIAddr string `codec:"api_addr"`
}

var memshareSpec = hclspec.NewBlock("memshare", false, hclspec.NewObject(map[string]*hclspec.Spec{
	"key":           hclspec.NewAttr("key", "string", false),
	"key_file":      hclspec.NewAttr("key_file", "string", false),
	"node":          hclspec.NewAttr("node", "string", false),
	"nbd_addr":      hclspec.NewAttr("nbd_addr", "string", false),
	"api_addr":      hclspec.NewAttr("api_addr", "string", false),
	"slab_size":     hclspec.NewAttr("slab_size", "string", false),
	"headroom":      hclspec.NewAttr("headroom", "string", false),
	"data_shards":   hclspec.NewAttr("data_shards", "number", false),
	"parity_shards": hclspec.NewAttr("parity_shards", "number", false),
	"layout":        hclspec.NewAttr("layout", "string", false),
	"tls_cert":      hclspec.NewAttr("tls_cert", "string", false),
	"tls_key":       hclspec.NewAttr("tls_key", "string", false),
	"tls_ca":        hclspec.NewAttr("tls_ca", "string", false),
	"donor": hclspec.NewBlockList("donor", hclspec.NewObject(map[string]*hclspec.Spec{
		"node":     hclspec.NewAttr("node", "string", true),
		"nbd_addr": hclspec.NewAttr("nbd_addr", "string", true),
		"api_addr": hclspec.NewAttr("api_addr", "string", true),
	})),
}))

// memshareSettings is a validated MemshareConfig.
type memshareSettings struct {
	key          []byte
	node         string
	nbdAddr      string
	apiAddr      string
	slabSize     uint64
	headroom     int64
	dataShards   int
	parityShards int
	layout       string
	donors       []memshare.DonorInfo
	serverTLS    *tls.Config // nil: plain
	clientTLS    *tls.Config
}

// settings validates the block; every error names its field.
func (m *MemshareConfig) settings() (*memshareSettings, error) {
	if m == nil {
		return nil, nil
	}
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("memshare."+format, a...)) }
	s := &memshareSettings{node: m.Node, nbdAddr: m.NBDAddr, apiAddr: m.APIAddr, dataShards: 4, parityShards: 2,
		slabSize: 64 << 20, headroom: 256 << 20}
	key, err := m.readKey()
	if err != nil {
		add("%v", err)
	}
	s.key = key
	if s.node == "" {
		s.node, _ = os.Hostname()
	}
	if (m.NBDAddr == "") != (m.APIAddr == "") {
		add("nbd_addr and api_addr: set both to lend memory, or neither")
	}
	for _, a := range []struct{ name, v string }{{"nbd_addr", m.NBDAddr}, {"api_addr", m.APIAddr}} {
		if _, _, err := net.SplitHostPort(a.v); a.v != "" && err != nil {
			add("%s: %q is not host:port", a.name, a.v)
		}
	}
	if m.SlabSize != "" {
		mib, err := taskspec.ParseMiB(m.SlabSize)
		if err != nil || mib > 4096 {
			add("slab_size: %q must be a size up to 4GiB", m.SlabSize)
		}
		s.slabSize = mib << 20
	}
	if m.Headroom != "" {
		mib, err := taskspec.ParseMiB(m.Headroom)
		if err != nil {
			add("headroom: %v", err)
		}
		s.headroom = int64(mib) << 20
	}
	if m.DataShards != 0 {
		s.dataShards = int(m.DataShards)
	}
	if m.ParityShards != 0 {
		s.parityShards = int(m.ParityShards)
	}
	if k := s.dataShards; k < 1 || k > 16 || 4096%k != 0 {
		add("data_shards: %d must be 1, 2, 4, 8 or 16", k)
	}
	if r := s.parityShards; r < 1 || r > 8 {
		add("parity_shards: %d must be from 1 to 8", r)
	}
	switch s.layout = m.Layout; s.layout {
	case "", consumer.LayoutSplit, consumer.LayoutWhole:
	default:
		add("layout: %q is not %q or %q", m.Layout, consumer.LayoutSplit, consumer.LayoutWhole)
	}
	if err := m.loadTLS(s); err != nil {
		add("%v", err)
	}
	for i, d := range m.Donors {
		s.donors = append(s.donors, memshare.DonorInfo{Node: d.Node, NBDAddr: d.NBDAddr, APIAddr: d.APIAddr})
		if d.Node == "" || d.NBDAddr == "" || d.APIAddr == "" {
			add("donor[%d]: node, nbd_addr and api_addr are required", i)
		}
	}
	return s, errors.Join(errs...)
}

// loadTLS reads the certificate, key and CA when configured.
func (m *MemshareConfig) loadTLS(s *memshareSettings) error {
	if m.TLSCert == "" && m.TLSKey == "" && m.TLSCA == "" {
		return nil
	}
	if m.TLSCert == "" || m.TLSKey == "" || m.TLSCA == "" {
		return errors.New("tls_cert, tls_key and tls_ca: set all three, or none")
	}
	cert, err := tls.LoadX509KeyPair(m.TLSCert, m.TLSKey)
	if err != nil {
		return fmt.Errorf("tls_cert/tls_key: %v", err)
	}
	pem, err := os.ReadFile(m.TLSCA)
	if err != nil {
		return fmt.Errorf("tls_ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("tls_ca: %s holds no PEM certificate", m.TLSCA)
	}
	s.serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.clientTLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return nil
}

func (m *MemshareConfig) readKey() ([]byte, error) {
	key := m.Key
	switch {
	case m.Key != "" && m.KeyFile != "":
		return nil, errors.New("key and key_file: set one, not both")
	case m.KeyFile != "":
		b, err := os.ReadFile(m.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("key_file: %v", err)
		}
		key = strings.TrimSpace(string(b))
	}
	if len(key) < memshare.MinKeyLen {
		return nil, fmt.Errorf("key: the shared secret needs at least %d characters", memshare.MinKeyLen)
	}
	return []byte(key), nil
}

func init() {
	configSpec.GetObject().Attributes["memshare"] = memshareSpec
}
