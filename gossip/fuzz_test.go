package gossip

import "testing"

// FuzzDecode: any input either decodes into a valid envelope whose view
// builds, or is refused with an error; never a panic.
func FuzzDecode(f *testing.F) {
	valid, _ := encode(kindFull, []Record{{Node: "n1", Sections: map[string]Section{
		"res":   sec(1, `{"mt":1,"mu":0,"md":0,"g":[{"i":0,"t":1,"f":0.5,"m":1}]}`),
		"coord": sec(2, `{"v":[0,0,0,0,0,0,0,0],"e":1.5,"a":0,"h":0.00001}`),
		"links": sec(3, `[{"p":"n2","bw":1e8,"rtt":0.001,"n":1,"at":1}]`),
	}}})
	f.Add(valid)
	f.Add([]byte(`{"schema":1,"kind":"update","recs":[]}`))
	f.Add([]byte(`{"schema":0}`))
	f.Add([]byte("\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := decode(b, 1<<20)
		if err != nil {
			return
		}
		if err := env.validate(); err != nil {
			t.Fatalf("decoded envelope fails validation: %v", err)
		}
		v := buildView("self", env.Records)
		for _, n := range v.Nodes {
			_ = n.MemFreeBytes()
			for _, o := range v.Nodes {
				v.RTT(n.Name, o.Name)
				v.Bandwidth(n.Name, o.Name)
			}
		}
	})
}
