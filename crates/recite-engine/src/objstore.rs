//! Tables on object storage (feature `object-store`): `s3://`, `gs://`, `az://` and
//! `http(s)://` locations, read through DataFusion's `object_store` integration.
//!
//! A location written as a URL is used as it is. Its store is built for the URL's bucket (or
//! host) from the usual environment variables only (`AWS_*`, `GOOGLE_*`, `AZURE_*`): never from
//! a citation or a `study.toml`, so neither can point recite at other credentials. The engine
//! calls `register_stores` before it registers such a table; a runtime that runs plans made
//! elsewhere (a Ballista scheduler or executor) takes `registry`, which builds each store the
//! same way the first time a plan names its bucket (docs/catalog.md).
//!
//! Without the feature, [`not_built`] is the error a URL location gets.

pub use crate::redact::{REDACTED, SCHEMES, not_built, redact, unsupported, without_query};

#[cfg(feature = "object-store")]
pub use enabled::*;

#[cfg(feature = "object-store")]
mod enabled {
    use std::sync::Arc;

    use datafusion::datasource::listing::ListingTableUrl;
    use datafusion::error::DataFusionError;
    use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
    use datafusion::execution::runtime_env::RuntimeEnv;
    use futures::TryStreamExt;
    use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
    use url::Url;

    use super::{SCHEMES, redact, unsupported};

    /// Why a store could not be made or listed.
    #[derive(Debug, Clone, PartialEq)]
    pub struct StoreError {
        /// The location, as written.
        pub url: String,
        /// What went wrong.
        pub error: String,
    }

    impl std::fmt::Display for StoreError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}", super::redact(&format!("{}: {}", self.url, self.error)))
        }
    }

    impl std::error::Error for StoreError {}

    /// A store error; both parts redacted, as the store's own messages may quote the URL.
    fn fail(url: &str, error: impl std::fmt::Display) -> StoreError {
        StoreError { url: redact(url).into_owned(), error: redact(&error.to_string()).into_owned() }
    }

    /// Registers, on `runtime`, the object store that serves `url` (its bucket, container or
    /// host), configured from the environment: `AmazonS3Builder::from_env` (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, …),
    /// `GoogleCloudStorageBuilder::from_env` (`GOOGLE_SERVICE_ACCOUNT`, …),
    /// `MicrosoftAzureBuilder::from_env` (`AZURE_STORAGE_ACCOUNT_NAME`, …); plain HTTP(S) takes
    /// none. Call it once per location before a plan reads it, in every process that reads it
    /// (the engine, each Ballista executor); registering again replaces the store.
    pub fn register_stores(runtime: &RuntimeEnv, url: &Url) -> Result<(), StoreError> {
        let store = store_for(url)?;
        runtime.register_object_store(url, store);
        Ok(())
    }

    /// [`register_stores`] for a table location as written in `study.toml` (a glob allowed).
    pub fn register_location(runtime: &RuntimeEnv, location: &str) -> Result<(), StoreError> {
        register_stores(runtime, listing_url(location)?.get_url())
    }

    /// An object-store registry that builds the store for an `s3://`, `gs://`, `az://` or
    /// `http(s)://` URL from the environment the first time a plan asks for it (as
    /// [`register_stores`] would), and keeps it; `file://` and stores registered explicitly are
    /// served as by DataFusion's default registry. For a runtime that runs plans it did not
    /// plan (a Ballista executor, whose tables' URLs are known only from its tasks):
    /// `RuntimeEnvBuilder::new().with_object_store_registry(recite::objstore::registry())`.
    pub fn registry() -> Arc<dyn ObjectStoreRegistry> {
        Arc::new(EnvStores(DefaultObjectStoreRegistry::new()))
    }

    /// [`registry`]: DataFusion's default registry, which builds missing stores from the
    /// environment.
    #[derive(Debug)]
    struct EnvStores(DefaultObjectStoreRegistry);

    impl ObjectStoreRegistry for EnvStores {
        fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
            self.0.register_store(url, store)
        }

        fn deregister_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
            self.0.deregister_store(url)
        }

        fn get_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
            if let Ok(store) = self.0.get_store(url) {
                return Ok(store);
            }
            if !SCHEMES.contains(&url.scheme()) {
                return self.0.get_store(url);
            }
            let store = store_for(url).map_err(|e| DataFusionError::External(Box::new(e)))?;
            self.0.register_store(url, store.clone());
            Ok(store)
        }
    }

    /// The store for `url`'s bucket or host.
    fn store_for(url: &Url) -> Result<Arc<dyn ObjectStore>, StoreError> {
        let text = url.as_str();
        let scheme = url.scheme();
        if !SCHEMES.contains(&scheme) {
            return Err(fail(text, unsupported(scheme)));
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(fail(text, "names no bucket or host"));
        };
        let built: object_store::Result<Arc<dyn ObjectStore>> = match scheme {
            "s3" | "s3a" => object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(host)
                .build()
                .map(|s| Arc::new(s) as _),
            "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(host)
                .build()
                .map(|s| Arc::new(s) as _),
            "az" | "azure" => object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_container_name(host)
                .build()
                .map(|s| Arc::new(s) as _),
            _ => {
                // The store serves the origin; an object's path is the URL's path. Plain HTTP is
                // allowed for an http:// URL (object_store refuses it by default): the URL says so.
                let origin = url.origin().ascii_serialization();
                let options = object_store::ClientOptions::new().with_allow_http(scheme == "http");
                object_store::http::HttpBuilder::new()
                    .with_url(origin)
                    .with_client_options(options)
                    .build()
                    .map(|s| Arc::new(s) as _)
            }
        };
        built.map_err(|e| fail(text, format!("its store cannot be set up from the environment: {e}")))
    }

    /// The listing a location names: one object, every object under a prefix that ends with
    /// `/`, or those matching a glob (`s3://b/waves/*.parquet`: the glob starts at the first
    /// segment holding `*`, `?` or `[`). DataFusion's own parser takes globs only in paths.
    pub fn listing_url(location: &str) -> Result<ListingTableUrl, StoreError> {
        let (base, glob) = split_glob(location);
        let url = Url::parse(base).map_err(|e| fail(location, format!("is not a valid URL: {e}")))?;
        let pattern = glob
            .map(glob::Pattern::new)
            .transpose()
            .map_err(|e| fail(location, format!("has an invalid glob: {e}")))?;
        ListingTableUrl::try_new(url, pattern).map_err(|e| fail(location, e.strip_backtrace()))
    }

    /// `(base, glob)`: the URL up to the `/` before the first segment with a glob character.
    fn split_glob(location: &str) -> (&str, Option<&str>) {
        let after_authority =
            location.find("://").map(|i| i + 3).and_then(|i| location[i..].find('/').map(|j| i + j));
        let Some(path_start) = after_authority else { return (location, None) };
        let Some(g) = location[path_start..].find(['*', '?', '[']).map(|g| path_start + g) else {
            return (location, None);
        };
        let slash = location[..g].rfind('/').unwrap_or(path_start);
        (&location[..=slash], Some(&location[slash + 1..]))
    }

    /// The objects a location names whose names end with `extension`, sorted by path, read
    /// from the store (never from DataFusion's listing cache): what the identity of a table on
    /// object storage is made of (`engine/cache.rs`). Errors (no such bucket, access denied,
    /// endpoint unreachable) come back as the store said them.
    pub async fn objects(
        runtime: &RuntimeEnv,
        url: &ListingTableUrl,
        extension: &str,
        ignore_subdirectory: bool,
    ) -> Result<Vec<ObjectMeta>, StoreError> {
        let store = runtime.object_store(url.object_store()).map_err(|e| fail(url.as_str(), e))?;
        let mut found: Vec<ObjectMeta> = if url.is_collection() {
            store.list(Some(url.prefix())).try_collect().await.map_err(|e| fail(url.as_str(), e))?
        } else {
            match store.head(url.prefix()).await {
                Ok(meta) => vec![meta],
                Err(object_store::Error::NotFound { .. }) => Vec::new(),
                Err(e) => return Err(fail(url.as_str(), e)),
            }
        };
        found.retain(|m| {
            m.location.as_ref().ends_with(extension) && url.contains(&m.location, ignore_subdirectory)
        });
        found.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(found)
    }

    /// The hive partition columns under a prefix (`wave=6/region=2/…`), from the first
    /// object's path, as for a folder on disk: whole numbers (in every object) are Int64,
    /// others text.
    pub fn hive_partitions(
        url: &ListingTableUrl,
        objects: &[ObjectMeta],
    ) -> Vec<(String, datafusion::arrow::datatypes::DataType)> {
        use datafusion::arrow::datatypes::DataType;
        let keys_of = |m: &ObjectMeta| -> Vec<(String, String)> {
            let Some(segments) = url.strip_prefix(&m.location) else { return Vec::new() };
            let segments: Vec<&str> = segments.collect();
            let folders = &segments[..segments.len().saturating_sub(1)];
            folders
                .iter()
                .map_while(|s| s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
                .collect()
        };
        let Some(first) = objects.first().map(keys_of) else { return Vec::new() };
        let all: Vec<Vec<(String, String)>> = objects.iter().map(keys_of).collect();
        let mut columns = Vec::new();
        for (depth, (key, _)) in first.iter().enumerate() {
            let at: Vec<Option<&(String, String)>> = all.iter().map(|k| k.get(depth)).collect();
            if at.iter().any(|kv| kv.is_none_or(|(k, _)| k != key)) {
                break;
            }
            let whole = at.iter().flatten().all(|(_, v)| v.parse::<i64>().is_ok());
            columns.push((key.clone(), if whole { DataType::Int64 } else { DataType::Utf8 }));
        }
        columns
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn globs_split_at_their_first_segment() {
            assert_eq!(split_glob("s3://b/k.parquet"), ("s3://b/k.parquet", None));
            assert_eq!(split_glob("s3://b/w/*.parquet"), ("s3://b/w/", Some("*.parquet")));
            assert_eq!(split_glob("gs://b/a/w?/x.parquet"), ("gs://b/a/", Some("w?/x.parquet")));
            assert_eq!(split_glob("s3://b"), ("s3://b", None));
            let u = listing_url("s3://b/w/*.parquet").unwrap();
            assert!(u.is_collection());
            assert!(u.contains(&object_store::path::Path::from("w/p1.parquet"), true));
            assert!(!u.contains(&object_store::path::Path::from("w/p1.csv"), true));
        }

        #[test]
        fn unknown_schemes_and_hostless_urls_are_refused_before_any_request() {
            let rt = RuntimeEnv::default();
            let e = register_location(&rt, "ftp://host/x.parquet").unwrap_err();
            assert!(e.error.contains("ftp://"), "{e}");
            let e = register_location(&rt, "abfss://c@a.dfs.core.windows.net/x.parquet").unwrap_err();
            assert!(e.error.contains("az://"), "{e}");
        }

        #[test]
        fn the_registry_builds_a_missing_store_once_and_serves_local_files() {
            let r = registry();
            let url = Url::parse("s3://bucket/t.parquet").unwrap();
            let a = r.get_store(&url).unwrap();
            let b = r.get_store(&Url::parse("s3://bucket/other.parquet").unwrap()).unwrap();
            assert!(Arc::ptr_eq(&a, &b), "one store per bucket");
            assert!(r.get_store(&Url::parse("file:///tmp/x.parquet").unwrap()).is_ok());
            assert!(r.get_store(&Url::parse("hdfs://h/x").unwrap()).is_err());
        }
    }
}
