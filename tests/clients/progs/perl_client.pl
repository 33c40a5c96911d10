# One client of the zoo in Perl: fetch each URL in turn, read it all.
# usage: perl perl_client.pl tiny|lwp CAFILE URL...
# tiny: HTTP::Tiny (core perl; IO::Socket::SSL for https), keep-alive.
# lwp: LWP::UserAgent (libwww-perl; LWP::Protocol::https), keep-alive cache.
# Exit status 0 when every URL answered 2xx, 1 otherwise.
use strict;
use warnings;

my ($mode, $cafile, @urls) = @ARGV;
my $ok = 1;
if ($mode eq 'tiny') {
	require HTTP::Tiny;
	my $http = HTTP::Tiny->new(verify_SSL => 1, timeout => 30,
	    SSL_options => { SSL_ca_file => $cafile });
	for my $url (@urls) {
		my $r = $http->get($url);
		$ok &&= $r->{success};
	}
} else {
	require LWP::UserAgent;
	my $ua = LWP::UserAgent->new(keep_alive => 1, timeout => 30,
	    ssl_opts => { SSL_ca_file => $cafile, verify_hostname => 1 });
	for my $url (@urls) {
		my $r = $ua->get($url);
		$ok &&= $r->is_success;
	}
}
exit($ok ? 0 : 1);
