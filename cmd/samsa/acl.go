package main

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newACLCommand groups the ACL admin subcommands (Kafka's kafka-acls.sh
// --list, --add and --remove), through kadm: they work against Apache
// Kafka as well as samsa.
func newACLCommand() *cobra.Command {
	opts := &adminOptions{}
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "List, create and delete ACLs",
		Long: `List, create and delete access control lists on a cluster with an authorizer
(samsa's authorizer.class.name, or Apache Kafka's). Every principal, host,
operation and resource given is combined with every other, as kafka-acls.sh does.

  samsa acl create --allow-principal User:alice --operation read,describe --topic orders --group audit
  samsa acl list --topic orders
  samsa acl delete --principal User:alice --topic orders`,
	}
	addAdminFlags(cmd, opts)
	cmd.AddCommand(newACLListCommand(opts), newACLCreateCommand(opts), newACLDeleteCommand(opts))
	return cmd
}

// aclFlags are the flags that name ACLs or filter them.
type aclFlags struct {
	allow, deny, principals []string
	hosts                   []string
	operations              []string
	topics, groups, txnIDs  []string
	cluster                 bool
	pattern                 string
}

func (f *aclFlags) addResourceFlags(cmd *cobra.Command, patternDefault string) {
	fs := cmd.Flags()
	fs.StringSliceVar(&f.hosts, "host", nil, "hosts (default: any, *)")
	fs.StringSliceVar(&f.operations, "operation", nil, "operations: all, read, write, create, delete, alter, describe, cluster_action, describe_configs, alter_configs, idempotent_write")
	fs.StringSliceVar(&f.topics, "topic", nil, "topics")
	fs.StringSliceVar(&f.groups, "group", nil, "consumer groups")
	fs.StringSliceVar(&f.txnIDs, "transactional-id", nil, "transactional ids")
	fs.BoolVar(&f.cluster, "cluster", false, "the cluster resource")
	fs.StringVar(&f.pattern, "resource-pattern-type", patternDefault, "literal, prefixed, or to match: any, match")
}

func (f *aclFlags) hasResource() bool {
	return len(f.topics)+len(f.groups)+len(f.txnIDs) > 0 || f.cluster
}

// builder is the kadm ACL builder of the flags: for a filter (list,
// delete), what is not given matches anything.
func (f *aclFlags) builder(filter bool) (*kadm.ACLBuilder, error) {
	b := kadm.NewACLs()
	pattern, err := kmsg.ParseACLResourcePatternType(f.pattern)
	if err != nil || pattern == kmsg.ACLResourcePatternTypeUnknown {
		return nil, fmt.Errorf("--resource-pattern-type %q: want literal, prefixed, any or match", f.pattern)
	}
	b.ResourcePatternType(pattern)
	ops := make([]kadm.ACLOperation, 0, len(f.operations))
	for _, name := range f.operations {
		op, err := kmsg.ParseACLOperation(name) // case, "-" and "_" do not matter
		if err != nil || op == kmsg.ACLOperationUnknown {
			return nil, fmt.Errorf("--operation %q: not an ACL operation", name)
		}
		ops = append(ops, op)
	}
	switch {
	case len(ops) > 0:
		b.Operations(ops...)
	case filter:
		b.Operations(kadm.OpAny)
	default:
		return nil, errors.New("give the operations with --operation")
	}
	if !f.hasResource() {
		if !filter {
			return nil, errors.New("give a resource: --topic, --group, --transactional-id or --cluster")
		}
		b.AnyResource()
	} else {
		b.MaybeTopics(f.topics...).MaybeGroups(f.groups...).MaybeTransactionalIDs(f.txnIDs...).MaybeClusters(f.cluster)
	}
	if filter {
		// --principal matches allow and deny entries; none matches any.
		b.Allow(f.principals...).AllowHosts(f.hosts...).Deny(f.principals...).DenyHosts(f.hosts...)
		return b, nil
	}
	if len(f.allow)+len(f.deny) == 0 {
		return nil, errors.New("give the principals with --allow-principal or --deny-principal (User:NAME)")
	}
	b.MaybeAllow(f.allow...).MaybeDeny(f.deny...)
	if len(f.hosts) > 0 {
		b.MaybeAllowHosts(f.hosts...).MaybeDenyHosts(f.hosts...)
	}
	return b, b.ValidateCreate()
}

// with builds the flags' ACLs (a filter or not), opens a session and
// runs fn with both.
func (f *aclFlags) with(cmd *cobra.Command, opts *adminOptions, filter bool, fn func(*session, *kadm.ACLBuilder) error) error {
	b, err := f.builder(filter)
	if err != nil {
		return err
	}
	return opts.with(cmd, func(s *session) error { return fn(s, b) })
}

// aclRow is one ACL as printed.
type aclRow struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Permission   string `json:"permission"`
	Operation    string `json:"operation"`
	ResourceType string `json:"resource_type"`
	Resource     string `json:"resource"`
	Pattern      string `json:"pattern"`
	Error        string `json:"error,omitempty"`
}

func newACLRow(principal, host string, typ kmsg.ACLResourceType, name string, pattern kadm.ACLPattern,
	op kadm.ACLOperation, perm kmsg.ACLPermissionType, err error, message string) aclRow {
	r := aclRow{Principal: principal, Host: host, Permission: perm.String(), Operation: op.String(),
		ResourceType: typ.String(), Resource: name, Pattern: pattern.String()}
	if err != nil {
		r.Error = kafkaErrorText(err, message)
	}
	return r
}

func sortACLRows(rows []aclRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.ResourceType+a.Resource != b.ResourceType+b.Resource {
			return a.ResourceType+a.Resource < b.ResourceType+b.Resource
		}
		return a.Principal+a.Operation+a.Permission < b.Principal+b.Operation+b.Permission
	})
}

func writeACLs(w io.Writer, f outputFormat, rows []aclRow) error {
	return writeRows(w, f, rows, "PRINCIPAL\tHOST\tPERMISSION\tOPERATION\tRESOURCE-TYPE\tRESOURCE\tPATTERN", func(tw io.Writer) {
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", r.Principal, r.Host, r.Permission, r.Operation, r.ResourceType, r.Resource, r.Pattern)
			if r.Error != "" {
				fmt.Fprintf(tw, "\t%s", r.Error)
			}
			fmt.Fprintln(tw)
		}
	})
}

// errSomeACLsFailed makes create and delete exit non-zero after printing
// what each ACL came to.
var errSomeACLsFailed = errors.New("some ACLs failed; see above")

func newACLListCommand(opts *adminOptions) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACLs that match the flags (all without any)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.with(cmd, opts, true, func(s *session, b *kadm.ACLBuilder) error {
				results, err := s.adm.DescribeACLs(s.ctx, b)
				if err != nil {
					return opts.requestError("describe ACLs", err)
				}
				rows := []aclRow{}
				for _, r := range results {
					if r.Err != nil {
						return fmt.Errorf("describe ACLs: %s", kafkaErrorText(r.Err, r.ErrMessage))
					}
					for _, d := range r.Described {
						rows = append(rows, newACLRow(d.Principal, d.Host, d.Type, d.Name, d.Pattern, d.Operation, d.Permission, nil, ""))
					}
				}
				sortACLRows(rows)
				return writeACLs(cmd.OutOrStdout(), s.format, rows)
			})
		},
	}
	cmd.Flags().StringSliceVar(&f.principals, "principal", nil, "principals, allowed or denied (User:NAME; default: any)")
	f.addResourceFlags(cmd, "any")
	return cmd
}

func newACLCreateCommand(opts *adminOptions) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create ACLs: every principal × host × operation × resource given",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.with(cmd, opts, false, func(s *session, b *kadm.ACLBuilder) error {
				results, err := s.adm.CreateACLs(s.ctx, b)
				if err != nil {
					return opts.requestError("create ACLs", err)
				}
				rows := make([]aclRow, 0, len(results))
				for _, r := range results {
					rows = append(rows, newACLRow(r.Principal, r.Host, r.Type, r.Name, r.Pattern, r.Operation, r.Permission, r.Err, r.ErrMessage))
				}
				return writeACLOutcome(cmd.OutOrStdout(), s.format, rows)
			})
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&f.allow, "allow-principal", nil, "principals to allow (User:NAME)")
	fs.StringSliceVar(&f.deny, "deny-principal", nil, "principals to deny (User:NAME)")
	f.addResourceFlags(cmd, "literal")
	return cmd
}

func newACLDeleteCommand(opts *adminOptions) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete the ACLs that match the flags (a resource or a principal is required)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.hasResource() && len(f.principals) == 0 {
				return errors.New("give a resource (--topic, --group, --transactional-id, --cluster) or a --principal: delete matches nothing else, not everything")
			}
			return f.with(cmd, opts, true, func(s *session, b *kadm.ACLBuilder) error {
				results, err := s.adm.DeleteACLs(s.ctx, b)
				if err != nil {
					return opts.requestError("delete ACLs", err)
				}
				rows := []aclRow{}
				for _, r := range results {
					if r.Err != nil {
						return fmt.Errorf("delete ACLs: %s", kafkaErrorText(r.Err, r.ErrMessage))
					}
					for _, d := range r.Deleted {
						rows = append(rows, newACLRow(d.Principal, d.Host, d.Type, d.Name, d.Pattern, d.Operation, d.Permission, d.Err, d.ErrMessage))
					}
				}
				return writeACLOutcome(cmd.OutOrStdout(), s.format, rows)
			})
		},
	}
	cmd.Flags().StringSliceVar(&f.principals, "principal", nil, "principals, allowed or denied (User:NAME; default: any)")
	f.addResourceFlags(cmd, "any")
	return cmd
}

// writeACLOutcome prints the ACLs created or deleted, and fails if one
// failed.
func writeACLOutcome(w io.Writer, f outputFormat, rows []aclRow) error {
	sortACLRows(rows)
	if err := writeACLs(w, f, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			return errSomeACLsFailed
		}
	}
	return nil
}
