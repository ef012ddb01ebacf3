package accept

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/hub/registration"
)

func TestPrintResult(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	boot := registration.BootstrapUser
	cases := map[string]struct {
		res  registration.AcceptResult
		want string
	}{
		"one request, approved: one line": {
			res: registration.AcceptResult{Requests: []registration.RequestDecision{
				{Name: "gpu-east-abcde", Requester: boot, Created: now.Add(-time.Minute), Outcome: registration.OutcomeApproved},
			}},
			want: "cluster gpu-east accepted; approved certificate request gpu-east-abcde\n",
		},
		"several: each with its requester": {
			res: registration.AcceptResult{Requests: []registration.RequestDecision{
				{Name: "gpu-east-new", Requester: boot, Created: now.Add(-time.Minute), Outcome: registration.OutcomeApproved},
				{Name: "gpu-east-planted", Requester: "system:open-cluster-management:gpu-west:a1", Created: now.Add(-2 * time.Minute),
					Outcome: registration.OutcomeNotApproved, Why: "filed by someone else"},
				{Name: "gpu-east-old", Requester: boot, Created: now.Add(-time.Hour), Outcome: registration.OutcomeOlderNotApproved, Why: "request gpu-east-new is newer"},
			}},
			want: "cluster gpu-east accepted; approved certificate request gpu-east-new\n" +
				"REQUEST           REQUESTER                                                        AGE  OUTCOME              WHY\n" +
				"gpu-east-new      system:serviceaccount:open-cluster-management:cluster-bootstrap  60s  approved             \n" +
				"gpu-east-planted  system:open-cluster-management:gpu-west:a1                       2m   not approved         filed by someone else\n" +
				"gpu-east-old      system:serviceaccount:open-cluster-management:cluster-bootstrap  60m  not approved: older  request gpu-east-new is newer\n",
		},
		"only a request it would not approve": {
			res: registration.AcceptResult{Requests: []registration.RequestDecision{
				{Name: "gpu-east-planted", Requester: "mallory", Created: now.Add(-time.Second), Outcome: registration.OutcomeNotApproved, Why: "filed by someone else"},
			}},
			want: "cluster gpu-east accepted, but it has no pending certificate request from its agent's bootstrap identity: " +
				"run accept again once its agent has asked (or use --wait)\n" +
				"REQUEST           REQUESTER  AGE  OUTCOME       WHY\n" +
				"gpu-east-planted  mallory    1s   not approved  filed by someone else\n",
		},
		"approved before": {
			res: registration.AcceptResult{AlreadyAccepted: true, Requests: []registration.RequestDecision{
				{Name: "gpu-east-abcde", Requester: boot, Created: now.Add(-time.Hour), Outcome: registration.OutcomeApprovedBefore},
			}},
			want: "cluster gpu-east is accepted; its agent's certificate was approved before\n" +
				"REQUEST         REQUESTER                                                        AGE  OUTCOME          WHY\n" +
				"gpu-east-abcde  system:serviceaccount:open-cluster-management:cluster-bootstrap  60m  approved before  \n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			if err := printResult(&out, "gpu-east", tc.res, now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
