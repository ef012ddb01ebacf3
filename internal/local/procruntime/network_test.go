package procruntime

import "testing"

func TestNetworkRewrite(t *testing.T) {
	n := &network{ip: "127.0.2.3", services: map[string]string{
		"flower-supernode.flower-addon:9094": "127.0.2.3:9094",
		"superlink.flower-system.svc:9091":   "127.0.2.3:9092",
		"superlink.flower-system:9091":       "127.0.2.3:9092",
	}}
	for in, want := range map[string]string{
		"0.0.0.0":               "127.0.2.3",
		"--listen=0.0.0.0:8080": "--listen=127.0.2.3:8080",
		"--appio-api-address=flower-supernode.flower-addon:9094": "--appio-api-address=127.0.2.3:9094",
		"superlink.flower-system:9091":                           "127.0.2.3:9092",
		"superlink.flower-system.svc:9091":                       "127.0.2.3:9092",
		"other.service:9091":                                     "other.service:9091",
		"superlink.flower-system:9092":                           "superlink.flower-system:9092",
		"/data/x:1":                                              "/data/x:1",
		"10.0.0.0:80":                                            "10.0.0.0:80",
		"a=0.0.0.0:1,b=0.0.0.0:2":                                "a=127.0.2.3:1,b=127.0.2.3:2",
		"10.0.0.0":                                               "10.0.0.0",
	} {
		if got := n.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}
