package addon

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// TestNext is the credentials state machine's table of transitions: in each phase, with the
// Secret as seen, what a round does next.
func TestNext(t *testing.T) {
	reg := addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName}
	subject := Subject("gpu-east", "scorer", "a1", reg)
	tmpl := secretTemplate{Signer: reg.SignerName, Cluster: "gpu-east", Hub: hubEndpoint{Host: "https://hub.example:6443", CA: []byte("hub CA")}}
	certPEM, keyPEM := issue(t, subject, 10*time.Hour) // valid from epoch; renewal due at 8 h
	current, err := secretData(tmpl.Signer, tmpl.Cluster, tmpl.Hub, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	movedHub := tmpl
	movedHub.Hub.Host = "https://hub.new:6443"
	moved, err := secretData(movedHub.Signer, movedHub.Cluster, movedHub.Hub, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	secret := func(data map[string][]byte) secretSeen {
		return secretSeen{Read: true, Secret: &corev1.Secret{Data: data}}
	}
	for name, tc := range map[string]struct {
		phase  phase
		issued map[string][]byte
		seen   secretSeen
		tmpl   secretTemplate
		now    time.Time
		want   step
	}{
		"a pending request is checked first, before the Secret is read": {
			phase: phaseRequested, now: epoch,
			want: step{Kind: stepCheckRequest},
		},
		"the Secret is read before anything else is decided": {
			phase: phaseSecret, now: epoch,
			want: step{Kind: stepReadSecret},
		},
		"no Secret: request a certificate": {
			phase: phaseSecret, seen: secretSeen{Read: true}, now: epoch,
			want: step{Kind: stepRequest, Why: "no certificate yet"},
		},
		"a usable certificate serves until its renewal": {
			phase: phaseSecret, seen: secret(current), tmpl: tmpl, now: epoch.Add(time.Hour),
			want: step{Kind: stepWait, After: 7 * time.Hour},
		},
		"due for renewal: request a new one": {
			phase: phaseSecret, seen: secret(current), tmpl: tmpl, now: epoch.Add(9 * time.Hour),
			want: step{Kind: stepRequest, Why: "the certificate is due for renewal since " + epoch.Add(8*time.Hour).Format(time.RFC3339)},
		},
		"the hub moved: the Secret follows, the certificate stays": {
			phase: phaseSecret, seen: secret(current), tmpl: movedHub, now: epoch.Add(time.Hour),
			want: step{Kind: stepRefresh, Data: moved},
		},
		"an issued certificate is stored": {
			phase: phaseIssued, issued: current, seen: secretSeen{Read: true}, tmpl: tmpl, now: epoch.Add(time.Hour),
			want: step{Kind: stepStore, Data: current},
		},
		"an issued certificate that expired before it was stored is dropped": {
			phase: phaseIssued, issued: current, seen: secretSeen{Read: true}, tmpl: tmpl, now: epoch.Add(11 * time.Hour),
			want: step{Kind: stepDropIssued, Why: "the stored certificate expired at " + epoch.Add(10*time.Hour).Format(time.RFC3339)},
		},
		"a stored certificate's rotation is reported": {
			phase: phaseStored, seen: secret(current), tmpl: tmpl, now: epoch.Add(time.Hour),
			want: step{Kind: stepReport},
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := &regState{target: target{Namespace: "ns", Secret: "s", Subject: subject}, phase: tc.phase, issued: tc.issued}
			if tc.phase == phaseRequested {
				st.pending = &registration.PendingRequest{}
			}
			got, err := next(st, tc.seen, tc.tmpl, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("next (-want +got):\n%s", diff)
			}
		})
	}
}
