# One client of the zoo in Ruby: fetch each URL in turn, read it all.
# usage: ruby ruby_client.rb CAFILE URL...
# Net::HTTP (OpenSSL for https), one keep-alive connection to the first
# URL's server (Net::HTTP.start).
# Exit status 0 when every URL answered 2xx, 1 otherwise.
require 'net/http'
require 'openssl'

cafile, *urls = ARGV
first = URI(urls.first)
ok = true
Net::HTTP.start(first.host, first.port, use_ssl: first.scheme == 'https',
                ca_file: cafile, verify_mode: OpenSSL::SSL::VERIFY_PEER,
                open_timeout: 30, read_timeout: 30) do |http|
  urls.each do |url|
    r = http.request(Net::HTTP::Get.new(URI(url)))
    ok &&= r.is_a?(Net::HTTPSuccess)
  end
end
exit(ok ? 0 : 1)
