package flower

import (
	"strconv"
)

// The Flower commands, in one place so that they are easy to adjust to Flower's flags (1.42).
// The images' entrypoints are the commands (flower-superlink, flower-supernode): manifests give
// only their arguments.

// Where the certificates are mounted in the containers.
const (
	superLinkTLSDir = "/etc/flower/tls"
	superNodeCADir  = "/etc/flower/ca"
)

// SuperLinkArgs are flower-superlink's arguments: process isolation (ServerApps run in their own
// pods and connect to the ServerAppIo, in 1.42 Runtime, API), on 0.0.0.0:PortFleet, where
// Flower 1.42 serves every API (Fleet, Control, Runtime) on one port; TLS with the serving
// certificate of ServingSecret, or --insecure. With TLS on, ServerApps need the CA too: the
// Runtime API shares the TLS port.
func SuperLinkArgs(tls bool) []string {
	args := []string{"--isolation", "process", "--host", "0.0.0.0", "--port", strconv.Itoa(PortFleet)}
	if !tls {
		return append(args, "--insecure")
	}
	return append(args,
		"--ssl-ca-certfile", superLinkTLSDir+"/ca.crt",
		"--ssl-certfile", superLinkTLSDir+"/tls.crt",
		"--ssl-keyfile", superLinkTLSDir+"/tls.key",
	)
}

// SuperNodeArgs are flower-supernode's arguments, with the template's variables: the SuperLink's
// Fleet API at SUPERLINK_ADDRESS:SUPERLINK_PORT, process isolation (ClientApps connect to the
// ClientAppIo API on 0.0.0.0:9094: Flower 1.42 has no --clientappio-api-address), the node config cluster-name="<cluster>" (OCM's), and the CA
// certificate of CAConfigMap as root certificates, or --insecure.
func SuperNodeArgs(tls bool) []string {
	args := []string{
		"--isolation", "process",
		"--superlink", "{{" + VarAddress + "}}:{{" + VarPort + "}}",
		"--host", "0.0.0.0", "--port", strconv.Itoa(PortClientAppIo),
		"--node-config", `cluster-name="{{CLUSTER_NAME}}"`,
	}
	if !tls {
		return append(args, "--insecure")
	}
	return append(args, "--root-certificates", superNodeCADir+"/ca.crt")
}
