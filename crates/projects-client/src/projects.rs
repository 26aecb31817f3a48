//! Projects: list a page, iterate all, create, delete.

use core_http::{
    Error, Result,
    pagination::{OffsetPages, OffsetPaginator, Page},
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::client::Client;

core_http::string_id! {
    /// The id of a project.
    pub struct ProjectId in projects;
}

core_http::string_enum! {
    /// Where a project runs. Values the service adds later are kept as sent.
    pub enum Environment in projects {
        /// Development (the sandbox's default when none is given).
        Development = "development",
        /// Staging.
        Staging = "staging",
        /// Production.
        Production = "production",
    }
}

core_http::string_enum! {
    /// Where a project stands. A new project is `active`.
    pub enum ProjectStatus in projects {
        /// In use.
        Active = "active",
        /// Suspended.
        Paused = "paused",
        /// Being deleted.
        Deleting = "deleting",
    }
}

/// A project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Project {
    /// Its id.
    pub id: ProjectId,
    /// Its name.
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub name: String,
    /// Its description (empty when none was given).
    #[serde(default, deserialize_with = "core_http::de::or_default")]
    pub description: String,
    /// The environment it was created in. The document does not list it in the create
    /// answer, so it may be absent there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// When it was created.
    #[serde(
        default,
        with = "core_http::timestamp::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<OffsetDateTime>,
    /// Where it stands (an empty `Unknown` when the server gave none).
    #[serde(default)]
    pub status: ProjectStatus,
}

/// A project to create.
///
/// ```
/// use projects_client::projects::{Environment, NewProject};
/// let new = NewProject::new("billing")
///     .description("Invoices and payments")
///     .environment(Environment::Production);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewProject {
    /// The name; required, not blank.
    pub(crate) name: String,
    /// A description. Defaults to none (not sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// The environment. Defaults to none (not sent: the service chooses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) environment: Option<Environment>,
}

impl NewProject {
    /// A project called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        NewProject {
            name: name.into(),
            description: None,
            environment: None,
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the environment.
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = Some(environment);
        self
    }

    fn validate(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            return Err(Error::InvalidRequest("a project needs a name".into()));
        }
        if self
            .environment
            .as_ref()
            .is_some_and(|e| e.as_str().trim().is_empty())
        {
            return Err(Error::InvalidRequest(
                "the environment identifier is empty".into(),
            ));
        }
        Ok(())
    }
}

/// Which page of projects to list (`limit` 1 to 100, the service's default 20;
/// `offset`): `ListProjects::new().limit(50).offset(100)`.
pub type ListProjects = core_http::pagination::PageParams;

/// The largest page the service serves.
pub const MAX_PAGE_SIZE: u32 = 100;

/// The projects resource: `client.projects()`.
#[derive(Debug, Clone, Copy)]
pub struct Projects<'a> {
    client: &'a Client,
}

impl<'a> Projects<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Projects { client }
    }

    /// One page of projects, oldest first. `GET /v1/projects?limit&offset`.
    ///
    /// A limit outside 1..=100 is refused with [`Error::InvalidRequest`] before anything
    /// is sent.
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// use projects_client::projects::ListProjects;
    /// let page = client.projects().list(&ListProjects::new().limit(50))?;
    /// println!("{} of {:?}", page.data.len(), page.meta.map(|m| m.total));
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn list(&self, params: &ListProjects) -> Result<Page<Project>> {
        self.client
            .http()
            .get("/v1/projects")
            .page(params, MAX_PAGE_SIZE)
            .send_page()
    }

    /// Every project, fetched lazily 100 at a time. Stops at `meta.total`, an empty or
    /// short page, or the first error (yielded as the last item).
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// let names: Vec<String> = client
    ///     .projects()
    ///     .iter()
    ///     .take(250)
    ///     .map(|p| p.map(|p| p.name))
    ///     .collect::<Result<_, _>>()?;
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn iter(&self) -> OffsetPaginator<Project> {
        self.iter_from(&ListProjects::new())
    }

    /// Every project from `params.offset` (default 0), fetched lazily `params.limit` (default
    /// 100) at a time; `next_offset()` tells where to start again later.
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// let mut items = client.projects().iter_from(&projects_client::projects::ListProjects::new().offset(200).limit(50));
    /// for item in items.by_ref().take(10) {
    ///     println!("{:?}", item?);
    /// }
    /// println!("go on from offset {}", items.next_offset());
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn iter_from(&self, params: &ListProjects) -> OffsetPaginator<Project> {
        let client = self.client.clone();
        OffsetPaginator::over(self.client.http(), params, MAX_PAGE_SIZE, move |p| {
            client.projects().list(p)
        })
    }

    /// Page by page from `params` (offset default 0, limit default 100), with each
    /// page's `meta`; the same stopping rules as [`iter`](Self::iter).
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// for page in client.projects().pages(&projects_client::projects::ListProjects::new().limit(50)) {
    ///     let page = page?;
    ///     println!("{} items (of {:?})", page.data.len(), page.meta.map(|m| m.total));
    /// }
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn pages(&self, params: &ListProjects) -> OffsetPages<Project> {
        let client = self.client.clone();
        OffsetPages::over(self.client.http(), params, MAX_PAGE_SIZE, move |p| {
            client.projects().list(p)
        })
    }

    /// Creates a project. `POST /v1/projects`; the answer is the new project, `active`.
    ///
    /// Not retried once the request may have reached the server (the service documents
    /// no idempotency key), so a dropped connection never creates two projects: the
    /// error's [`may_have_been_processed`](core_http::Error::may_have_been_processed)
    /// says whether to look for it before trying again.
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// use projects_client::projects::{Environment, NewProject};
    /// let project = client.projects().create(&NewProject::new("billing").environment(Environment::Production))?;
    /// println!("{} is {}", project.id, project.status);
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn create(&self, project: &NewProject) -> Result<Project> {
        project.validate()?;
        self.client
            .http()
            .post("/v1/projects")
            .json(project)
            .send()?
            .json_data()
    }

    /// Deletes a project. `DELETE /v1/projects/{id}`; 204, or 200 with or without a
    /// body, is success. A project that does not exist is an error of kind
    /// [`ErrorKind::NotFound`](core_http::ErrorKind::NotFound), which a clean-up can
    /// treat as already deleted; a 404 to a *retry*, after an earlier attempt may have
    /// deleted it (its answer lost), is success
    /// ([`RequestBuilder::send_delete`](core_http::transport::RequestBuilder::send_delete)).
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// use projects_client::ErrorKind;
    /// match client.projects().delete("proj_123") {
    ///     Ok(()) => println!("deleted"),
    ///     Err(e) if e.kind() == ErrorKind::NotFound => println!("already gone"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn delete(&self, id: impl Into<ProjectId>) -> Result<()> {
        let path = format!("/v1/projects/{}", id.into().segment()?);
        self.client.http().delete(&path).send_delete()
    }
}

/// Reached from the client.
impl Client {
    /// Projects: list, iterate, create, delete.
    ///
    /// ```no_run
    /// # let client = projects_client::Client::new("https://api.example.com", "sk")?;
    /// let page = client.projects().list(&projects_client::projects::ListProjects::new().limit(10))?;
    /// println!("{} projects on the first page", page.data.len());
    /// # Ok::<(), projects_client::Error>(())
    /// ```
    pub fn projects(&self) -> Projects<'_> {
        Projects::new(self)
    }
}
