package flower

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla/flotilla/internal/hub/addontemplate"
)

// Check is the add-on's check of what its agent is rendered from (addontemplate.Reconciler.Checks),
// for the hub's own template: in the AddOnDeploymentConfig, SUPERLINK_ADDRESS must be a DNS name
// or an IP address (IPv6 in brackets) and, with TLS, one the SuperLink's certificate names;
// SUPERLINK_PORT a port; IMAGE an image reference (the values are substituted into the
// SuperNode's arguments as they are); and spec.agentInstallNamespace must be flower-addon, where
// FederatedLearning's ClientApps reach the SuperNode (the CRD's default is another namespace). A
// missing variable is the renderer's to report.
func Check(o Options) addontemplate.Check {
	o = o.withDefaults()
	return func(in addontemplate.Input) error {
		if in.Template == nil || !owned(in.Template.Labels) || in.Config == nil {
			return nil
		}
		for i, v := range in.Config.Spec.CustomizedVariables {
			var err error
			switch v.Name {
			case VarAddress:
				err = checkAddressVariable(o, v.Value)
			case VarPort:
				if n, perr := strconv.Atoi(v.Value); perr != nil || n < 1 || n > 65535 {
					err = fmt.Errorf("not a port: give the port of the SuperLink's Fleet API as the clusters reach it, from 1 to 65535 (the Service's is %d)", PortFleet)
				}
			case VarImage:
				err = checkImage(v.Value)
			}
			if err != nil {
				return fmt.Errorf("AddOnDeploymentConfig %s/%s spec.customizedVariables[%d] %s=%q: %w",
					in.Config.Namespace, in.Config.Name, i, v.Name, v.Value, err)
			}
		}
		if ns := in.Config.Spec.AgentInstallNamespace; ns != "" && ns != SuperNodeNamespace {
			return fmt.Errorf("AddOnDeploymentConfig %s/%s spec.agentInstallNamespace %q: the SuperNode runs in %s, where FederatedLearning's ClientApps reach it "+
				"(%s.%s:%d): set it to %s", in.Config.Namespace, in.Config.Name, ns, SuperNodeNamespace, SuperNodeName, SuperNodeNamespace, PortClientAppIo, SuperNodeNamespace)
		}
		return nil
	}
}

func checkAddressVariable(o Options, value string) error {
	host := value
	if strings.HasPrefix(value, "[") && strings.HasSuffix(value, "]") {
		host = value[1 : len(value)-1]
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil {
			return fmt.Errorf("only an IPv6 address goes in brackets")
		}
	} else if ip := net.ParseIP(value); ip != nil && ip.To4() == nil {
		return fmt.Errorf("put an IPv6 address in brackets, [%s]: the SuperNode is given HOST:PORT", value)
	}
	if err := checkHost(host); err != nil {
		return err
	}
	if o.Insecure {
		return nil
	}
	dns, ips := o.SANs()
	if ip := net.ParseIP(host); ip != nil {
		if slices.ContainsFunc(ips, ip.Equal) {
			return nil
		}
	} else if slices.Contains(dns, host) {
		return nil
	}
	names := append([]string(nil), dns...)
	for _, ip := range ips {
		names = append(names, ip.String())
	}
	return fmt.Errorf("the SuperLink's TLS certificate does not name it (it names %s), so the SuperNode would refuse the connection: "+
		"use one of those, or start the hub with %s=%s:PORT so that its certificate names it", strings.Join(names, ", "), FlagAddress, value)
}
