//! The smallest HTTP/1.1 weft needs, on std sockets and threads (no async
//! runtime): a server that answers `GET` requests one at a time on its own
//! thread (`/metrics`, `/healthz`), and a blocking client that `POST`s to
//! an OTLP collector over a kept-alive connection.
//!
//! Both ends bound everything: message heads are at most 16 KiB, replies
//! 1 MiB, every read and write has a timeout, and the server stops within
//! 100 ms of being asked to.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The largest request or response head read.
const MAX_HEAD: usize = 16 * 1024;
/// How long a peer may take to send its request or read our answer.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Bodies at least this long are compressed for a peer that accepts gzip.
const GZIP_FROM: usize = 4096;

/// One request, as much of it as the handlers need.
pub struct Request<'a> {
    /// The path, without the query.
    pub path: &'a str,
}

/// An answer to one request.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// `ADDR` as `--prometheus` takes it: `HOST:PORT`, `[V6]:PORT`, or `:PORT`
/// for every interface.
pub fn parse_listen_address(text: &str) -> Result<SocketAddr, String> {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    full.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("`{text}` is not an address to listen on: use HOST:PORT, such as 127.0.0.1:9464, or :9464"))
}

/// A server answering on its own thread until dropped.
pub struct Server {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `address` and answers each `GET`/`HEAD` request with
    /// `handler(request)`; a long body goes gzip-compressed to a peer that
    /// accepts it (as Prometheus does).
    pub fn start(
        address: SocketAddr,
        handler: impl Fn(&Request<'_>) -> Response + Send + 'static,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("weft-http".into())
            .spawn(move || serve(&listener, &stopping, &handler))?;
        Ok(Server {
            address,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when 0 was asked).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits up to 100 ms for the listener to have a connection waiting.
fn readable(listener: &TcpListener) -> bool {
    runtime::host::wait_readable(listener.as_fd(), Duration::from_millis(100))
}

fn serve(listener: &TcpListener, stop: &AtomicBool, handler: &dyn Fn(&Request<'_>) -> Response) {
    while !stop.load(Ordering::SeqCst) {
        if !readable(listener) {
            continue;
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        // One bad peer never stops the server.
        let _ = answer(stream, handler);
    }
}

fn answer(stream: TcpStream, handler: &dyn Fn(&Request<'_>) -> Response) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let head = read_head(&mut reader)?;
    let mut lines = head.lines();
    let request = lines.next().unwrap_or_default();
    let mut parts = request.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let accepts_gzip = lines.any(|l| {
        l.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("accept-encoding")
                && value.split(',').any(|e| e.trim().starts_with("gzip"))
        })
    });
    let mut response = match method {
        "GET" | "HEAD" => handler(&Request { path }),
        "" => Response::text(400, "bad request\n"),
        _ => Response::text(405, "only GET and HEAD\n"),
    };
    let mut encoding = "";
    if accepts_gzip && response.body.len() >= GZIP_FROM {
        response.body = gzip(&response.body)?;
        encoding = "Content-Encoding: gzip\r\n";
    }
    let mut out = io::BufWriter::new(stream);
    write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\n{encoding}Content-Length: {}\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    )?;
    if method != "HEAD" {
        out.write_all(&response.body)?;
    }
    out.flush()
}

/// gzip at the fastest level: an exposition compresses about tenfold, and
/// the scrape stays cheap.
fn gzip(body: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 8),
        flate2::Compression::fast(),
    );
    encoder.write_all(body)?;
    encoder.finish()
}

/// Reads a message head (up to and without the empty line).
fn read_head(reader: &mut impl BufRead) -> io::Result<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = reader.by_ref().take(MAX_HEAD as u64).read_line(&mut line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        if line == "\r\n" || line == "\n" {
            return Ok(head);
        }
        head.push_str(&line);
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
    }
}

/// An `http://HOST[:PORT]/PATH` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl Url {
    /// Parses an `http://` URL; `https://` is refused with the reason.
    pub fn parse(text: &str) -> Result<Url, String> {
        if text.starts_with("https://") {
            return Err(format!(
                "`{text}`: weft sends OTLP over plain HTTP; send it to a local OpenTelemetry Collector (http://127.0.0.1:4318), which forwards over TLS"
            ));
        }
        let rest = text
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{text}` is not an http:// URL"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("`{text}`: `{p}` is not a port"))?,
            ),
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("`{text}` names no host"));
        }
        Ok(Url {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// What a `POST` got back.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// `Retry-After` in seconds, when the server sent one.
    pub retry_after: Option<u64>,
    pub body: Vec<u8>,
}

/// A blocking HTTP/1.1 client for one server, keeping its connection open
/// between requests (and opening a new one when the server closed it).
pub struct Client {
    url: Url,
    timeout: Duration,
    connection: Option<BufReader<TcpStream>>,
}

impl Client {
    pub fn new(url: Url, timeout: Duration) -> Client {
        Client {
            url,
            timeout,
            connection: None,
        }
    }

    fn connect(&self) -> io::Result<BufReader<TcpStream>> {
        let addr = (self.url.host.as_str(), self.url.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address for the host"))?;
        let stream = TcpStream::connect_timeout(&addr, self.timeout)?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        stream.set_nodelay(true)?;
        Ok(BufReader::new(stream))
    }

    /// `POST`s `body` to `path`. A connection the server closed since the
    /// last request is opened again once.
    pub fn post(&mut self, path: &str, content_type: &str, body: &[u8]) -> io::Result<Reply> {
        let reused = self.connection.is_some();
        match self.post_once(path, content_type, body) {
            Err(_) if reused => {
                self.connection = None;
                self.post_once(path, content_type, body)
            }
            other => other,
        }
    }

    fn post_once(&mut self, path: &str, content_type: &str, body: &[u8]) -> io::Result<Reply> {
        let mut conn = match self.connection.take() {
            Some(c) => c,
            None => self.connect()?,
        };
        let host = &self.url.host;
        let port = self.url.port;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: weft/{}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            body.len()
        );
        {
            let stream = conn.get_mut();
            stream.write_all(head.as_bytes())?;
            stream.write_all(body)?;
            stream.flush()?;
        }
        let head = read_head(&mut conn)?;
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no HTTP status line"))?;
        let mut length = None;
        let mut chunked = false;
        let mut close = false;
        let mut retry_after = None;
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "retry-after" => retry_after = value.parse::<u64>().ok(),
                _ => {}
            }
        }
        let body = if chunked {
            read_chunked(&mut conn)?
        } else if let Some(n) = length {
            let mut body = vec![0u8; n.min(1 << 20)];
            conn.read_exact(&mut body)?;
            body
        } else {
            close = true;
            let mut body = Vec::new();
            conn.by_ref().take(1 << 20).read_to_end(&mut body)?;
            body
        };
        if !close {
            self.connection = Some(conn);
        }
        Ok(Reply {
            status,
            retry_after,
            body,
        })
    }
}

fn read_chunked(conn: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        conn.read_line(&mut size)?;
        let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            let mut end = String::new();
            conn.read_line(&mut end)?;
            return Ok(body);
        }
        if body.len() + size > 1 << 20 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "reply too long"));
        }
        let at = body.len();
        body.resize(at + size, 0);
        conn.read_exact(&mut body[at..])?;
        let mut crlf = [0u8; 2];
        conn.read_exact(&mut crlf)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(
            parse_listen_address("127.0.0.1:9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address(":9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert!(
            parse_listen_address("9464")
                .unwrap_err()
                .contains("HOST:PORT")
        );
    }

    #[test]
    fn urls() {
        let u = Url::parse("http://collector:4318/v1/traces").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("collector", 4318, "/v1/traces")
        );
        let u = Url::parse("http://127.0.0.1").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
        let u = Url::parse("http://[::1]:4318").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 4318));
        assert!(Url::parse("https://x").unwrap_err().contains("plain HTTP"));
        assert!(Url::parse("ftp://x").is_err());
        assert!(Url::parse("http://x:99999/").is_err());
    }

    #[test]
    fn a_server_answers_and_a_client_posts() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), |request| {
            let path = request.path;
            if path == "/big" {
                return Response::text(200, "weft\n".repeat(2000));
            }
            Response::text(
                if path == "/x" { 200 } else { 404 },
                format!("path {path}\n"),
            )
        })
        .unwrap();
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream
            .write_all(b"POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{text}"
        );
        let url = Url::parse(&format!("http://{}/x", server.address())).unwrap();
        let mut client = Client::new(url, Duration::from_secs(5));
        let reply = client.post("/x", "text/plain", b"hello").unwrap();
        assert_eq!(
            (reply.status, reply.body.as_slice()),
            (405, &b"only GET and HEAD\n"[..])
        );
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream
            .write_all(b"GET /x?a=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\npath /x\n"), "{text}");
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        // A long body goes compressed to a peer that takes gzip, and only to it.
        for gzip in [false, true] {
            let mut stream = TcpStream::connect(server.address()).unwrap();
            let accept = if gzip {
                "Accept-Encoding: gzip\r\n"
            } else {
                ""
            };
            write!(stream, "GET /big HTTP/1.1\r\n{accept}\r\n").unwrap();
            let mut raw = Vec::new();
            stream.read_to_end(&mut raw).unwrap();
            let at = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            let head = String::from_utf8_lossy(&raw[..at]).into_owned();
            let mut body = raw[at + 4..].to_vec();
            assert_eq!(head.contains("Content-Encoding: gzip"), gzip, "{head}");
            if gzip {
                assert!(body.len() < 1000, "{} bytes", body.len());
                let mut plain = Vec::new();
                flate2::read::GzDecoder::new(&body[..])
                    .read_to_end(&mut plain)
                    .unwrap();
                body = plain;
            }
            assert_eq!(body, "weft\n".repeat(2000).into_bytes());
        }
        drop(server);
    }
}
