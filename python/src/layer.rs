//! The data layer a call reads (a folder of studies) and the extractors it runs, chosen as the
//! command line chooses them: `data=`, else `RECITE_DATA`, else `./datasets` in the working
//! directory, else the datasets of the clone this package was built from.

use std::path::{Path, PathBuf};

use recite_core::catalog::Catalog;
use recite_core::extractor::Registry;
use recite_core::report::DataLayer;

use crate::errors::{Error, Kind};

/// The datasets bundled with this build: the `datasets/` folder of the workspace it was built in
/// (as `recite`'s own), so a report names the same folder whichever front end wrote it.
pub fn bundled() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR"));
    python.parent().unwrap_or(python).join("datasets")
}

/// What a call settles against.
pub struct Layer {
    /// Where the studies are, and how that folder was chosen.
    pub data_layer: DataLayer,
    /// The studies declared there.
    pub catalog: Catalog,
    /// The bundled extractors, and those of `extractors=`.
    pub registry: Registry,
}

/// Chooses the data layer and loads it with the extractor registry.
pub fn open(data: Option<&Path>, extractors: Option<&Path>) -> Result<Layer, Error> {
    let data_layer = choose(data);
    let catalog = load(&data_layer)?;
    let registry = registry(extractors)?;
    Ok(Layer { data_layer, catalog, registry })
}

/// The data layer `data=` names, or the command line's default.
pub fn choose(data: Option<&Path>) -> DataLayer {
    DataLayer::choose(data, bundled())
}

/// The catalog of a chosen data layer; an error names the folder.
pub fn load(layer: &DataLayer) -> Result<Catalog, Error> {
    recite_engine::sav::load_layer(layer)
        .map_err(|e| Error::from_error(Kind::DataLayer, &e).at(layer.path.clone()))
}

/// The bundled extractors, with the declarations of the folder `extra` added.
pub fn registry(extra: Option<&Path>) -> Result<Registry, Error> {
    Registry::load(extra).map_err(|e| {
        let err = Error::from_error(Kind::Extractor, &e);
        match extra {
            Some(p) => err.at(p.display().to_string()),
            None => err,
        }
    })
}
