package flower

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla/flotilla/internal/version"
)

// Default images: Flower 1.42's official ones.
const (
	DefaultSuperLinkImage = "flwr/superlink:1.42.0"
	DefaultSuperNodeImage = "flwr/supernode:1.42.0"
)

// DefaultAddress is where the clusters reach the SuperLink's Fleet API by default: its Service's
// name, which resolves only where the hub's cluster DNS does (a local fleet, or a hub whose
// network the clusters share); set Options.Address otherwise.
var DefaultAddress = SuperLinkName + "." + Namespace + ".svc:" + strconv.Itoa(PortFleet)

// Options are the hub's settings of the add-on (flags of `flotilla hub`).
type Options struct {
	// SuperLinkImage runs the SuperLink on the hub (DefaultSuperLinkImage when "").
	SuperLinkImage string
	// SuperNodeImage is the default AddOnDeploymentConfig's IMAGE (DefaultSuperNodeImage when "").
	SuperNodeImage string
	// Address is HOST[:PORT] where the clusters reach the SuperLink's Fleet API (DefaultAddress
	// when "", port 9092 when left out): the default AddOnDeploymentConfig's SUPERLINK_ADDRESS and
	// SUPERLINK_PORT, and a name of the SuperLink's serving certificate.
	Address string
	// Insecure turns TLS off between SuperNodes and the SuperLink (OCM's default); Flotilla's is on.
	Insecure bool
	// FrontImage is Flotilla's image, which runs `flotilla flower-front` beside each Flower
	// federation's own SuperLink (version.ImageRef() when "").
	FrontImage string
}

// Flags of `flotilla hub` that set Options, named in errors.
const (
	FlagSuperLinkImage = "--flower-superlink-image"
	FlagSuperNodeImage = "--flower-supernode-image"
	FlagAddress        = "--flower-superlink-address"
	FlagTLS            = "--flower-tls"
	FlagFrontImage     = "--flower-front-image"
)

// withDefaults fills what is empty.
func (o Options) withDefaults() Options {
	if o.SuperLinkImage == "" {
		o.SuperLinkImage = DefaultSuperLinkImage
	}
	if o.SuperNodeImage == "" {
		o.SuperNodeImage = DefaultSuperNodeImage
	}
	if o.Address == "" {
		o.Address = DefaultAddress
	}
	if o.FrontImage == "" {
		o.FrontImage = version.ImageRef()
	}
	return o
}

// WithDefaults is o with what is empty filled in.
func (o Options) WithDefaults() Options { return o.withDefaults() }

// Host is the host of o.Address: where the clusters reach the hub (an IPv6 address without
// brackets). o must be valid.
func (o Options) Host() string {
	h, _ := o.hostPort()
	return h
}

// Validate says what is wrong with o, naming the flag and the fix.
func (o Options) Validate() error {
	o = o.withDefaults()
	if _, _, err := splitAddress(o.Address); err != nil {
		return fmt.Errorf("%s %q: %w", FlagAddress, o.Address, err)
	}
	for flag, image := range map[string]string{FlagSuperLinkImage: o.SuperLinkImage, FlagSuperNodeImage: o.SuperNodeImage, FlagFrontImage: o.FrontImage} {
		if err := checkImage(image); err != nil {
			return fmt.Errorf("%s %q: %w", flag, image, err)
		}
	}
	return nil
}

// hostPort is o.Address's host (an IPv6 address without brackets) and port. o must be valid.
func (o Options) hostPort() (string, int) {
	h, p, _ := splitAddress(o.withDefaults().Address)
	return h, p
}

// splitAddress reads HOST[:PORT] (an IPv6 host in brackets when a port follows).
func splitAddress(addr string) (string, int, error) {
	host, port := addr, PortFleet
	if h, p, err := net.SplitHostPort(addr); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535: give HOST or HOST:PORT, e.g. superlink.example.com:%d", p, PortFleet)
		}
		host, port = h, n
	} else if net.ParseIP(addr) == nil && strings.Contains(addr, ":") {
		return "", 0, fmt.Errorf("not HOST or HOST:PORT (%v): e.g. superlink.example.com:%d, or [2001:db8::1]:%d", err, PortFleet, PortFleet)
	}
	if err := checkHost(host); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// checkHost accepts an IP address or a lower-case DNS name, without scheme or path.
func checkHost(host string) error {
	if net.ParseIP(host) != nil {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return fmt.Errorf("host %q is neither an IP address nor a lower-case DNS name: give the name or address the clusters reach the SuperLink at, without scheme, port or path", host)
	}
	return nil
}

// checkImage refuses what cannot be an image reference (it is substituted into JSON as is).
func checkImage(image string) error {
	if image == "" || strings.ContainsAny(image, " \t\r\n\"\\{}") {
		return fmt.Errorf("not an image reference: give one such as %s", DefaultSuperNodeImage)
	}
	return nil
}

// SANs are the names of the SuperLink's serving certificate: its Service's, and the host of
// the external address.
func (o Options) SANs() (dns []string, ips []net.IP) {
	dns = []string{
		SuperLinkName, SuperLinkName + "." + Namespace, SuperLinkName + "." + Namespace + ".svc",
		SuperLinkName + "." + Namespace + ".svc.cluster.local",
	}
	host, _ := o.hostPort()
	if ip := net.ParseIP(host); ip != nil {
		return dns, []net.IP{ip}
	}
	if !slices.Contains(dns, host) {
		dns = append(dns, host)
	}
	return dns, nil
}
